// The options every command takes, apart from program.ts so context.ts can name their type
// without importing the module that builds the tree.
import { flag, type FlagsOf } from './flag-table.js';

/** The options every command takes (`showGlobalOptions` lists them under each command's own). */
export const GLOBAL_FLAGS = [
  flag('--base-url <url>', 'service base address (SVC_BASE_URL)'),
  flag('--json', 'print exactly one JSON document on stdout'),
  flag('--jq <expression>', 'filter the JSON document with a jq expression, as gh does (implies --json)'),
  flag('--verbose', 'print request ids and timings on stderr'),
  flag('--no-color', 'no colour, no spinner'),
  flag('--insecure', 'allow sending a token over plain http to a non-loopback host'),
  flag('--max-wait <duration>', 'longest wait for a rate limit or an unavailable service (SVC_MAX_WAIT)'),
];
/** The global options as commander parses them (context.ts's GlobalOptions). */
export type GlobalFlags = FlagsOf<typeof GLOBAL_FLAGS>;
