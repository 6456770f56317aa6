// `--hosted`: the engine selects the card set exactly as a local run would, then opens the run
// with `origin: hosted` for a hosted runner to execute (openHostedRun), and nothing runs here. What
// travels is what the open's body holds (agent, model, scope, cards); every other flag that shapes
// the run is refused here before anything opens, naming where it is set instead (its row's
// `hosted`, src/dispatch/flags/table.ts; docs/hosted.md, "What travels").
import { hostedRefusal } from '../../dispatch/index.js';
import type { DispatchOptions } from '../../dispatch/lifecycle/types.js';
import { UsageError } from '../exit-codes.js';
import type { DispatchFlags } from './flags.js';

const CARRIED = 'a hosted run carries only its agent, model and cards';

/**
 * Refuses, in one line, the first flag given with `--hosted` that openDispatchRun's body cannot carry: the
 * runner would never see it, and the client sends no field the contract does not list. Called
 * with the flags as typed (not those `continue` takes from a recorded run).
 */
export function checkHostedFlags(flags: DispatchFlags): void {
  if (flags.report?.length) throw new UsageError('--report needs a run executed here; a hosted run reports where it runs');
  const refused = hostedRefusal(flags);
  if (refused) throw new UsageError(`${refused.name} does not travel with --hosted (${CARRIED}): ${refused.where}`);
}

/** `auto` loops over runs on this machine: a hosted runner is handed one run. */
export function refuseHostedAuto(opts: Pick<DispatchOptions, 'command'>): void {
  if (opts.command === 'auto') throw new UsageError('auto loops over runs on this machine; open hosted runs with batch or next instead');
}
