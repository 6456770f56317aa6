// `continue RUN_ID`: the agent and flags of the original run where the user passed none; flags
// still win. run.json's options come back typed (readRecordedOptions: an option of another shape
// counts as not recorded). A flag whose row says `replay` is given again by its row
// (src/dispatch/flags/table.ts, replayFlags); those the command settles itself are below; what
// neither says takes its row's default when the flags become options.
import { AGENT_FORMATS, readRecordedOptions, readRunRecord, replayFlags } from '../../dispatch/index.js';
import type { RecordedOptions } from '../../dispatch/options.js';
import type { DispatchFlags } from './flags.js';

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

const asFlag = (v: number | undefined) => (v === undefined ? undefined : String(v));
const onlyTrue = (v: boolean | undefined) => (v === true ? true : undefined);

/** The flags of the original run the command settles itself, each from what run.json recorded. */
const SETTLED: { [K in keyof DispatchFlags]?: (r: Recorded) => DispatchFlags[K] | undefined } = {
  attempts: (r) => asFlag(r.attempts),
  // The workflow's flags of the original run (.svc/workflow.yml itself is read again from the base).
  verify: (r) => r.verify,
  setup: (r) => r.setup,
  // A continued run pushes, and writes pull requests, as the original did.
  push: (r) => onlyTrue(r.push),
  pr: (r) => onlyTrue(r.pr),
  draft: (r) => onlyTrue(r.draft),
};

/** The flags of a `continue`: those given, then what `recorded` (run.json's options) says. */
export function continueFlags(flags: DispatchFlags, recorded: unknown): DispatchFlags {
  if (!recorded) return flags;
  const r = readRecordedOptions(recorded);
  const out: DispatchFlags = { ...flags, ...agentFlags(flags, r), ...replayFlags(r, (key) => given(flags, key)) };
  for (const key of Object.keys(SETTLED) as (keyof DispatchFlags)[]) if (!given(flags, key)) replay(out, key, SETTLED[key]!, r);
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
