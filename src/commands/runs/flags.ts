// The flags of `svc runs watch|report`, each declared once (flag-table.ts): register.ts adds them
// to the commands, and the handlers take the types derived from them.
import { flag, type FlagsOf } from '../flag-table.js';

export const WATCH_FLAGS = [flag('--interval <duration>', 'poll interval', { default: '2s' })];
export type RunsWatchFlags = FlagsOf<typeof WATCH_FLAGS>;

export const REPORT_FLAGS = [
  flag('--since <duration>', 'also every local run opened this recently (e.g. 12h)'),
  flag('--format <format>', "junit, markdown, html or json (default: from --output's extension)"),
  flag('-o, --output <file>', 'where to write it (default: stdout)'),
];
export type RunsReportFlags = FlagsOf<typeof REPORT_FLAGS>;
