// `continue RUN_ID`: the agent and flags of the original run where the user passed none; flags
// still win. run.json's options come back typed (readRecordedOptions: an option of another shape
// counts as not recorded), and each flag continue takes is one line beside its row (flags.ts,
// REPLAYED); what neither says takes DISPATCH_DEFAULTS when the flags become options.
import { AGENT_FORMATS, readRecordedOptions, readRunRecord } from '../../dispatch/index.js';
import type { RecordedOptions } from '../../dispatch/options.js';
import { REPLAYED, type DispatchFlags } from './flags.js';

type Recorded = Partial<RecordedOptions>;

/** Whether the user gave the flag: a lone negation's `true` (`worktree`) is commander's default. */
const given = (flags: DispatchFlags, key: keyof DispatchFlags) => flags[key] !== undefined && !(key === 'worktree' && flags.worktree === true);

function replay<K extends keyof DispatchFlags>(out: DispatchFlags, key: K, from: (r: Recorded) => DispatchFlags[K] | undefined, recorded: Recorded): void {
  const value = from(recorded);
  if (value !== undefined) out[key] = value;
}

/** The original run's agent (and each attempt's, best of N) unless the user chose one. */
function agentFlags(flags: DispatchFlags, r: Recorded): Partial<DispatchFlags> {
  const agent = r.agent;
  if (flags.agent || flags.agentCmd || !agent) return {};
  const format = Object.entries(AGENT_FORMATS).find(([, f]) => f === agent.stream)?.[0];
  const names = (r.agents ?? []).map((a) => a.agent);
  const models = (r.agents ?? []).map((a) => a.model);
  const every = (list: (string | undefined)[]): list is string[] => list.length > 1 && list.every((v) => v !== undefined);
  const model = every(models) ? models : agent.model !== undefined ? [agent.model] : undefined;
  return {
    ...(every(names) ? { agent: names } : agent.agent !== undefined ? { agent: [agent.agent] } : {}),
    ...(agent.agentCmd !== undefined ? { agentCmd: agent.agentCmd } : {}),
    ...(agent.agentCmd !== undefined && format ? { agentFormat: format } : {}),
    ...(!flags.model && model ? { model } : {}),
  };
}

/** The flags of a `continue`: those given, then what `recorded` (run.json's options) says. */
export function continueFlags(flags: DispatchFlags, recorded: unknown): DispatchFlags {
  if (!recorded) return flags;
  const r = readRecordedOptions(recorded);
  const out: DispatchFlags = { ...flags, ...agentFlags(flags, r) };
  for (const key of Object.keys(REPLAYED) as (keyof DispatchFlags)[]) if (!given(flags, key)) replay(out, key, REPLAYED[key]!, r);
  return out;
}

/** `continue RUN_ID`'s flags: the original run's from this machine's run.json, if it has one. */
export function continuedFlags(flags: DispatchFlags, stateDir: string, runId: string): DispatchFlags {
  let recorded: Recorded | undefined;
  try {
    recorded = readRunRecord(stateDir, runId)?.options;
  } catch {
    // A run id that is no folder name: the service says what it is.
  }
  return continueFlags(flags, recorded);
}
