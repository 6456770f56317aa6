// The network of a run's legs (DISPATCH.md §2, §9): `--network` > SVC_NETWORK > stored `network` >
// the default (fenced where legs run as pool uids, as root; open otherwise, until a normal user's
// fence can be had), and the allowlist: the preset's model hosts, the git host, the workflow's
// `network: allow:` and `--allow-host`. A fence that cannot be had is refused here, before any run opens.
import type { AgentChoice } from '../../dispatch/agent/presets.js';
import type { AgentPoolSpec } from '../../dispatch/agent/user.js';
import { AllowEntryError, Allowlist, formatAllowEntry } from '../../dispatch/fence/allowlist.js';
import { agentHosts, gitHost } from '../../dispatch/fence/hosts.js';
import { NETWORK_MODES, type NetworkMode, type NetworkPolicy } from '../../dispatch/fence/index.js';
import { nftWorks } from '../../dispatch/fence/nft.js';
import type { Workflow } from '../../dispatch/workflow/policy.js';
import type { Context } from '../context.js';
import { UsageError } from '../exit-codes.js';
import type { DispatchFlags } from './flags.js';

export interface NetworkInputs {
  agent: AgentChoice;
  workflow: Workflow | null | undefined;
  repo: string;
  /** The run's agent pool (svc is root): the fence is per uid. Null: agents run as svc's user. */
  pool: AgentPoolSpec | null | undefined;
  /** Whether the kernel takes svc's rules (default: nftWorks); tests say no. */
  nft?: () => Promise<string | null>;
}

/** The run's network policy and the one line that says it, or a UsageError (exit 2). */
export async function networkFor(
  flags: Pick<DispatchFlags, 'network' | 'allowHost'>,
  ctx: Context,
  input: NetworkInputs,
): Promise<{ network: NetworkPolicy; line: string }> {
  const stored = ctx.config().get('network');
  const [asked, source] =
    flags.network !== undefined
      ? [flags.network as string, '--network']
      : ctx.env.SVC_NETWORK
        ? [ctx.env.SVC_NETWORK, 'SVC_NETWORK']
        : stored
          ? [stored, 'network (stored)']
          : [undefined, 'default'];
  if (asked !== undefined && !NETWORK_MODES.includes(asked as NetworkMode)) throw new UsageError(`${source}: expected open, fenced or none, got '${asked}'`);
  const entries = [...agentHosts(input.agent.agent, ctx.env), ...(input.workflow?.networkAllow ?? []), ...(flags.allowHost ?? [])];
  const git = await gitHost(input.repo);
  if (git) entries.push(git);
  let allow: Allowlist;
  try {
    allow = Allowlist.parse(entries);
  } catch (error) {
    if (error instanceof AllowEntryError) throw new UsageError(`--allow-host: ${error.message}`);
    throw error;
  }
  const allowed = allow.toString() || 'nothing';
  if (!input.pool) {
    // A normal user's fence (a network namespace per leg) is not built yet: never silently open.
    if (asked === 'fenced' || asked === 'none')
      throw new UsageError(
        `${source}: ${asked} needs svc to run as root with an agent user (a uid per leg); without one it cannot be had here (use --network open)`,
      );
    return { network: { mode: 'open', allow: [] }, line: 'network: open (legs reach any host; as root they are fenced)' };
  }
  const mode = (asked ?? 'fenced') as NetworkMode;
  if (mode === 'open') return { network: { mode, allow: [] }, line: `network: open (${source}; legs reach any host)` };
  const why = await (input.nft ?? nftWorks)();
  if (why) throw new UsageError(`${source}: ${mode} needs nftables rules, which this machine refused (${why}); install nftables or use --network open`);
  const line = mode === 'none' ? 'network: none (legs reach no host)' : `network: fenced (legs reach ${allowed})`;
  return { network: { mode, allow: allow.entries.map(formatAllowEntry) }, line };
}
