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

export default function setup(project: TestProject): () => void {
  const { dir, close } = openRunTmp('test');
  project.provide('runTmp', dir);
  return close;
}
