// Types of ./run-tmp.mjs for the TypeScript that imports it (test/support/run-tmp.ts and its test).
export declare const RUN_TMP_OWNER: string;
export declare function runTmpPrefix(kind: 'test' | 'bench'): string;
export declare function removeTree(dir: string): string | null;
export declare function openRunTmp(kind: 'test' | 'bench'): { dir: string; close(): void };
