// The network of a run's legs (README.md#configuration, docs/trust.md): `--network` > SVC_NETWORK > stored `network` >
// the default (fenced where legs run as pool uids, as root; open otherwise, until a normal user's
// fence can be had), and the allowlist: the preset's model hosts, the git host, the workflow's
// `network: allow:` and `--allow-host` (a hosted run adds its service and its clones' git hosts).
// A fence that cannot be had is refused here, before any run opens.
import type { AgentChoice } from '../../dispatch/agent/presets.js';
import type { AgentPoolSpec } from '../../dispatch/boundary/user.js';
import type { Allowlist } from '../../dispatch/fence/allowlist.js';
import type { NetworkMode, NetworkPolicy } from '../../dispatch/fence/index.js';
import { loadEngine, removeStaleFences } from '../../dispatch/index.js';
import type { Workflow } from '../../dispatch/workflow/policy.js';
import type { Context } from '../context.js';
import { UsageError } from '../exit-codes.js';
import type { DispatchFlags } from './flags.js';

export interface NetworkInputs {
  agent: AgentChoice;
  /** Whose `network: allow:` counts (a hosted run: every clone's, together). */
  workflow: Pick<Workflow, 'networkAllow'> | null | undefined;
  /** The repository whose `origin` is the git host. */
  repo: string;
  /** Entries every leg may reach besides (a hosted run: the service, the git host of each clone). */
  hosts?: readonly string[];
  /** The run's agent pool (svc is root): the fence is per uid. Null: agents run as svc's user. */
  pool: AgentPoolSpec | null | undefined;
  /** Whether the kernel takes svc's rules (default: nftWorks); tests say no. */
  nft?: () => Promise<string | null>;
  /** Whether a network namespace can be had (default: probeBwrap); tests say no. */
  bwrap?: () => Promise<string | null>;
  /** svc's uid (default process.getuid()): a normal user is fenced by default where bwrap works. */
  uid?: number;
  /** Removes a crashed svc's tables (default: removeStaleFences, as root). */
  sweep?: () => Promise<unknown>;
}

/** The run's network policy and the one line that says it, or a UsageError (exit 2). */
export async function networkFor(
  flags: Pick<DispatchFlags, 'network' | 'allowHost'>,
  ctx: Context,
  input: NetworkInputs,
): Promise<{ network: NetworkPolicy; line: string }> {
  const { AllowEntryError, Allowlist, agentHosts, formatAllowEntry, gitHost, NETWORK_MODES, nftWorks, probeBwrap } = await loadEngine();
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
  const entries = [...agentHosts(input.agent.agent, ctx.env), ...(input.workflow?.networkAllow ?? []), ...(flags.allowHost ?? []), ...(input.hosts ?? [])];
  const parse = (more: readonly string[]): Allowlist => {
    try {
      return Allowlist.parse([...entries, ...more]);
    } catch (error) {
      if (error instanceof AllowEntryError) throw new UsageError(`--allow-host: ${error.message}`);
      throw error;
    }
  };
  // A bad entry is refused whatever the mode; the git host (a git process) is asked only for a
  // fenced run, the one that lists it.
  parse([]);
  const fenced = async () => {
    const git = await gitHost(input.repo);
    return parse(git ? [git] : []);
  };
  const policy = (mode: NetworkMode, allow?: Allowlist) => ({ mode, allow: allow ? allow.entries.map(formatAllowEntry) : [] });
  const decided = async (mode: NetworkMode, how: string) => {
    if (mode !== 'fenced') return { network: policy(mode), line: `network: none (legs reach no host; ${how})` };
    const allow = await fenced();
    return { network: policy(mode, allow), line: `network: fenced (legs reach ${allow.toString() || 'nothing'}; ${how})` };
  };
  // A crashed svc's rules would still hold its uids, open run or not: gone before any leg leases one.
  if (input.pool) await (input.sweep ?? (() => removeStaleFences().catch(() => [])))();
  if (asked === 'open') return { network: policy('open'), line: `network: open (${source}; legs reach any host)` };
  if (!input.pool) {
    // svc's own user: a network namespace per program, where bubblewrap can make one. The default
    // is fenced for a normal user where it works; root that chose --agent-user none stays open.
    const uid = input.uid ?? process.getuid?.() ?? -1;
    if (asked === undefined && uid === 0)
      return { network: policy('open'), line: "network: open (agents run as svc's own user; --network fenced to fence them)" };
    const why = await (input.bwrap ?? probeBwrap)();
    if (why && asked === undefined) return { network: policy('open'), line: `network: open (the fence cannot be had here: ${why})` };
    if (why) throw new UsageError(`${source}: ${asked} cannot be had here (${why}); use --network open`);
    return decided((asked ?? 'fenced') as NetworkMode, 'a network namespace per program');
  }
  const mode = (asked ?? 'fenced') as NetworkMode;
  const why = await (input.nft ?? nftWorks)();
  if (why) throw new UsageError(`${source}: ${mode} needs nftables rules, which this machine refused (${why}); install nftables or use --network open`);
  return decided(mode, 'nftables rules per agent uid');
}
