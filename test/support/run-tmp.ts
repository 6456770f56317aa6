// globalSetup of both vitest configs: the run's temp folder (scripts/run-tmp.mjs). The workers are
// started after it, so they and every process a test spawns inherit its TMPDIR; removed when the
// run ends. test/support/run-tmp.test.ts fails if this is no longer set up.
import type { TestProject } from 'vitest/node';
import { openRunTmp } from '../../scripts/run-tmp.mjs';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The run's temp folder, as made here (inject('runTmp')). */
    runTmp: string;
  }
}

// One folder for the whole run, however many projects set it up (vitest.system.config.ts has two).
// A second folder would be made inside the first and TMPDIR moved to it, and the project that ends
// first (one a filter left without files ends at once) would remove it under the other's workers.
const SHARED = Symbol.for('svc.test.runTmp');
interface Shared {
  dir: string;
  close: () => void;
  users: number;
}

export default function setup(project: TestProject): () => void {
  const g = globalThis as { [SHARED]?: Shared };
  const shared = (g[SHARED] ??= { ...openRunTmp('test'), users: 0 });
  shared.users++;
  project.provide('runTmp', shared.dir);
  return () => {
    if (--shared.users > 0) return;
    delete g[SHARED];
    shared.close();
  };
}
