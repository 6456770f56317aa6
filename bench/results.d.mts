// Types of ./results.mjs for the TypeScript that imports it (test/bench/results.test.ts).
export interface BenchRow {
  figure: string;
  measured: string | number;
  goal: string;
  /** null: shown for context, never gates. */
  pass: boolean | null;
  note?: string;
}
export interface BenchSection {
  name: string;
  title: string;
  rows: BenchRow[];
  startedAt: Date;
  endedAt: Date;
  loadBefore: number | null;
  loadAfter: number | null;
}
export interface BenchMachine {
  cores: number;
  cpu: string;
  node: string;
  commit: string | null;
  dirty: boolean;
}
export declare function verdict(pass: boolean | null): 'PASS' | 'FAIL' | '—';
export declare function machineNow(root: string): BenchMachine;
export declare function sectionText(section: BenchSection, machine: BenchMachine): string;
export declare function sectionsOf(page: string | null): Map<string, string>;
export declare function resultsPage(previous: string | null, order: string[], ran: BenchSection[], machine: BenchMachine): string;
