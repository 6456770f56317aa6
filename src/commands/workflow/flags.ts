// The flags of `svc workflow check`, each declared once (flag-table.ts): register.ts adds them to
// the commands, and the handlers take the types derived from them.
import { flag, type FlagsOf } from '../flag-table.js';

export const CHECK_FLAGS = [
  flag('--repo <dir>', 'the repository (SVC_REPO; default: the current directory)'),
  flag('--ref <commit>', "check the file as committed there (what a run uses) instead of the working tree's"),
];
export type WorkflowCheckFlags = FlagsOf<typeof CHECK_FLAGS>;
