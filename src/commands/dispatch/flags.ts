// The flags of the dispatch commands, each declared once: their rows are the engine's
// (src/dispatch/flags/table.ts), since a row also says the option of the run it fills, its default,
// what `continue` gives again and what travels with `--hosted`. register.ts adds them to the
// commands, and the handlers take the types derived from them.
export { AUTO_FLAGS, DISPATCH_FLAG, DISPATCH_FLAGS, LANE_FLAGS, PULL_REQUEST_FLAGS, RERUN_FLAGS } from '../../dispatch/index.js';
export type { DispatchFlags } from '../../dispatch/flags/table.js';
