// The flags of `svc plan add|submit`, each declared once (flag-table.ts): register.ts adds them to
// the commands, and the handlers take the types derived from them.
import { flag, type FlagsOf } from '../flag-table.js';
import { PROJECT } from '../common-flags.js';

/** `--target` may repeat and take comma lists: `--target A --target B` or `--target A,B`. */
const targets = (value: string, previous: string[] = []) => [
  ...previous,
  ...value
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean),
];

export const THREAD_FLAGS = [
  PROJECT,
  flag('--target <key>', 'a work item the thread is about (repeatable, or comma-separated); none: the project-wide thread', { parse: targets }),
];
export type PlanAddFlags = FlagsOf<typeof THREAD_FLAGS>;

export const SUBMIT_FLAGS = [
  ...THREAD_FLAGS,
  flag('--wait', 'wait until the plan is no longer generating, then print its proposals'),
  flag('--timeout <duration>', 'longest wait with --wait', { default: '10m' }),
];
export type PlanSubmitFlags = FlagsOf<typeof SUBMIT_FLAGS>;
