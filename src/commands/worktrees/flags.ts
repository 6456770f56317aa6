// The flags of `svc worktrees prune`, each declared once (flag-table.ts): register.ts adds them to
// the commands, and the handlers take the types derived from them.
import { flag, type FlagsOf } from '../flag-table.js';

export const PRUNE_FLAGS = [flag('--repo <dir>', 'the repository (SVC_REPO)')];
export type WorktreesPruneFlags = FlagsOf<typeof PRUNE_FLAGS>;
