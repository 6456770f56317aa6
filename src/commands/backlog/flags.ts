// The flags of `svc backlog list|move`, each declared once (flag-table.ts): register.ts adds them
// to the commands, and the handlers take the types derived from them.
import { flag, type FlagsOf } from '../flag-table.js';
import { LIMIT, PROJECT } from '../common-flags.js';

export const LIST_FLAGS = [PROJECT, flag('--filter <expr>', 'narrow it with a filter expression (grammar: docs/service.md)'), LIMIT];
export type BacklogListFlags = FlagsOf<typeof LIST_FLAGS>;

export const MOVE_FLAGS = [PROJECT];
export type BacklogMoveFlags = FlagsOf<typeof MOVE_FLAGS>;
