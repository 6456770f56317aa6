// The flags of `svc logs`, each declared once (flag-table.ts).
import { flag, type FlagsOf } from '../flag-table.js';

export const LOGS_FLAGS = [
  flag('-f, --follow', 'go on printing what the legs of a live run write, until it ends'),
  flag('--no-headers', 'no `── KEY ──` line before each leg'),
  flag('--raw', "print each log as recorded: an agent's JSON events as they came, not as readable lines"),
];
export type LogsFlags = FlagsOf<typeof LOGS_FLAGS>;
