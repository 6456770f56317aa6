// The flags of `svc designs`, each declared once (flag-table.ts): register.ts adds them to the
// commands, and the handlers take the types derived from them.
import { flag, type FlagsOf } from '../flag-table.js';
import { LIMIT, PROJECT } from '../common-flags.js';

export const DESIGNS_FLAGS = [
  PROJECT,
  flag('--path-prefix <path>', 'only designs with a file whose repository path starts with this (case-sensitive)'),
  flag('--query <text>', 'only designs whose title contains this, ignoring case'),
  LIMIT,
];
export type DesignsFlags = FlagsOf<typeof DESIGNS_FLAGS>;
