// The flags of `svc ready bugs|containers`, each declared once (flag-table.ts): register.ts adds
// them to the commands, and the handlers take the types derived from them.
import { flag, type FlagsOf, rephrase } from '../flag-table.js';
import { PROJECT } from '../common-flags.js';

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** The filters both lanes take. */
export const LANE_FLAGS = [
  rephrase(PROJECT, 'project key'),
  flag('--priority <p>', 'priority (repeatable)', { parse: collect }),
  flag('--assignee <id>', 'assignee id or `none`'),
  flag('--sprint <id>', 'sprint id or `active`'),
];
export type LaneFlags = FlagsOf<typeof LANE_FLAGS>;

export const BUGS_FLAGS = [
  ...LANE_FLAGS,
  flag('--kind <kind>', 'kind (repeatable)', { parse: collect }),
  flag('--ancestor <key>', 'beneath this container (repeatable)', { parse: collect }),
  flag('--allow-soft-block', 'do not require ancestors to be ready'),
];
export type ReadyBugsFlags = FlagsOf<typeof BUGS_FLAGS>;
