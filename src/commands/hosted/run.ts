// A hosted run executed by this container (docs/hosted.md): any dispatch command,
// or `svc attach`, started with SVC_RUN_ID and SVC_RUN_TOKEN (and no SVC_TOKEN). The run decides:
// its command, its cards (the legs still queued or running) and its scope come from getDispatchRun; the
// command's own card selection is not done. Everything goes through the run credential (getDispatchRun, getWorkItem,
// 29, 27, 30; no heartbeat), each card works in a worktree of its target repository's clone, and
// an implemented leg's branch is pushed through the credential helper (`--push`, on by default).
// Each clone's `.svc/workflow.yml` of its base commit is read as a local run reads it (workflowFor).
// Its legs are fenced as a local run's are (networkFor): the allowlist adds the service and the
// git host of each clone, and every clone's `network: allow:`.
import { resolve } from 'node:path';
import type { DispatchCommand } from '../../contract/types.js';
import type { AgentChoice } from '../../dispatch/agent/presets.js';
import type { HostedExecution } from '../../dispatch/hosted/index.js';
import { loadEngine, resolveStateDir, startHostedRun } from '../../dispatch/index.js';
import type { DispatchOptions, RunSummary } from '../../dispatch/lifecycle/types.js';
import type { Context } from '../context.js';
import { resolveBaseUrl, resolveMaxWaitMs } from '../settings.js';
import { pullRequestOptions } from '../dispatch/pr-options.js';
import { prepareHostedForCommand, type HostedCommandOptions } from './execution.js';
import { agentChoice, agentUserFor, flagOptions, gitIdentityFor, workflowFor } from '../dispatch/run-options.js';
import type { Workflow } from '../../dispatch/workflow/policy.js';
import { projectOfKey } from '../dispatch/project.js';
import { printSummary, runUnderProgress } from '../dispatch/engine-tail.js';
import type { DispatchFlags } from '../dispatch/flags.js';
import { ATTACH_FLAGS, type AttachFlags } from './flags.js';
import type { NetworkPolicy } from '../../dispatch/fence/index.js';
import type { AgentPoolSpec } from '../../dispatch/boundary/user.js';
import { networkFor, type NetworkInputs } from '../dispatch/network-options.js';

/**
 * The flags a hosted execution honours: `svc attach`'s, and a dispatch command's --project.
 * `push` and `pr` undefined: the default of hosted runs (on); false: `--no-push`, `--no-pr`.
 */
export type HostedRunFlags = AttachFlags & Pick<DispatchFlags, 'project'>;

/** The project of a hosted run: its cards' (a key names its project), else the flag or SVC_PROJECT. */
function projectOf(flags: HostedRunFlags, ctx: Context, h: HostedExecution): string {
  const key = h.run.cards[0]?.workItemKey;
  return (key ? projectOfKey(key) : null) ?? flags.project ?? ctx.env.SVC_PROJECT ?? '';
}

/** The engine's options for a hosted run. Secrets: the run credential and every git token so far. */
export function hostedDispatchOptions(
  flags: HostedRunFlags,
  ctx: Context,
  h: HostedExecution,
  workspaceDir: string,
  agent: AgentChoice,
  runToken: string,
): DispatchOptions {
  return {
    command: (h.run.command as DispatchCommand) ?? 'run',
    keys: h.run.cards.map((c) => c.workItemKey),
    projectKey: projectOf(flags, ctx, h),
    baseUrl: resolveBaseUrl(ctx),
    repo: workspaceDir,
    agent,
    ...flagOptions(ATTACH_FLAGS, flags, ctx),
    giveUpAfterMs: resolveMaxWaitMs(ctx),
    // The heartbeat is not among the run credential's operations: hosted runs send none.
    heartbeat: false,
    ...(flags.reconcile === false ? { reconcile: false as const } : {}),
    push: flags.push !== false,
    ...(({ pr, draft }) => ({ pr: pr && flags.push !== false, draft }))(pullRequestOptions(flags, ctx, true)),
    secrets: [runToken, ...(ctx.env.SVC_TOKEN ? [ctx.env.SVC_TOKEN] : [])].filter(Boolean),
    liveSecrets: () => h.secrets(),
    // The agent gets the allowlist of this environment (agentEnv: never an SVC_* variable or a
    // token); its own git calls must fail rather than prompt.
    env: { ...ctx.env, GIT_TERMINAL_PROMPT: '0' },
  };
}

/**
 * `.svc/workflow.yml` of each repository's checkout, at the commit its legs start from (HEAD: the
 * clone's default branch, or the checkout already there), by folder. A mistake in one is one line
 * and exit 2 before any leg starts; the runner's end then closes the run `failed`.
 */
export async function hostedWorkflows(ctx: Context, h: Pick<HostedExecution, 'repositories'>): Promise<Record<string, Workflow | null>> {
  const out: Record<string, Workflow | null> = {};
  for (const r of h.repositories) {
    const { workflow, hint } = await workflowFor({}, r.dir);
    if (hint) ctx.out.warn(`${r.repository}: ${hint}`);
    out[r.dir] = workflow;
  }
  return out;
}

/**
 * The network of a hosted run's legs (docs/hosted.md, "Networking"): as a local
 * run's, over every clone's workflow, with the service and the clones' git hosts allowed.
 */
export async function hostedNetwork(
  ctx: Context,
  flags: HostedRunFlags,
  input: {
    agent: AgentChoice;
    workspaceDir: string;
    pool: AgentPoolSpec | null | undefined;
    repoDirs: string[];
    workflows: Record<string, Workflow | null>;
    /** Tests: whether the kernel takes the rules, and the stale tables' sweep (networkFor's defaults otherwise). */
    probes?: Pick<NetworkInputs, 'nft' | 'sweep'>;
  },
): Promise<{ network: NetworkPolicy; line: string }> {
  const { gitHost, urlEntry } = await loadEngine();
  const service = urlEntry(resolveBaseUrl(ctx));
  const gitHosts = await Promise.all(input.repoDirs.map(gitHost));
  const networkAllow = Object.values(input.workflows).flatMap((w) => w?.networkAllow ?? []);
  return networkFor(flags, ctx, {
    agent: input.agent,
    workflow: { networkAllow },
    repo: input.workspaceDir,
    pool: input.pool,
    hosts: [service, ...gitHosts].filter((h): h is string => h !== null),
    ...input.probes,
  });
}

export interface HostedRunRequest {
  /** The command the user typed (`attach` for `svc attach`). */
  invokedAs: DispatchCommand | 'attach';
  /** Positional arguments of the command (ignored: the run decides). */
  keys?: string[];
  flags: HostedRunFlags;
  /** Tests: the helper's argv and broker tuning. */
  hosted?: Pick<HostedCommandOptions, 'helperArgv' | 'refreshAheadMs'>;
}

/** Prints the plan of `svc attach --dry-run`, or of a dispatch command's `--dry-run` in a hosted container. */
export type DryRunPrinter = (ctx: Context, h: HostedExecution) => void | Promise<void>;

/**
 * Executes this container's hosted run through the engine. Sets ctx.exitCode from the summary;
 * the broker and its socket are disposed whatever happens.
 */
export async function runHostedCommand(ctx: Context, req: HostedRunRequest, printPlan: DryRunPrinter): Promise<RunSummary | null> {
  // A hosted run winds down on a signal (its clone, broker and run are cleaned up and closed).
  ctx.interrupts.handle?.('dispatch');
  const workspaceDir = resolve(ctx.cwd, req.flags.repo ?? ctx.env.SVC_REPO ?? '.');
  // `svc attach` with no agent at all (no flag, the run names none, none stored) cannot execute:
  // it shows the plan, as --dry-run does, and says so. A dispatch command is a usage error then.
  let lookOnly = Boolean(req.flags.dryRun);
  // The agent is chosen (and its flags checked) once, as soon as the run is read: from the flags,
  // the run's preset or the stored choice.
  let agent: AgentChoice | undefined;
  const h = await prepareHostedForCommand(ctx, {
    ...req.hosted,
    workspaceDir,
    interruptible: false,
    clone: (r) => {
      if (lookOnly) return false;
      agent = agentChoice(req.flags, ctx, req.invokedAs !== 'attach', r.run);
      if (!agent.agent && !agent.agentCmd) {
        ctx.out.warn(`no agent to execute run ${r.run.id} with: showing its plan (pass --agent or --agent-cmd to execute it)`);
        lookOnly = true;
      }
      return !lookOnly;
    },
  });
  const flags: HostedRunFlags = { ...req.flags, dryRun: lookOnly };
  try {
    const run = h.run.run;
    if (req.invokedAs !== 'attach' && req.invokedAs !== h.run.command) {
      ctx.out.warn(`svc ${req.invokedAs} inside hosted run ${run.id}: the run's command is ${h.run.command}; following the run`);
    } else if (req.invokedAs !== 'attach' && req.keys && req.keys.length > 0) {
      const cards = new Set(h.run.cards.map((c) => c.workItemKey));
      const foreign = req.keys.filter((k) => !cards.has(k));
      if (foreign.length > 0) ctx.out.warn(`hosted run ${run.id} decides its cards; ignoring ${foreign.join(', ')}`);
    }
    if (flags.dryRun) {
      await printPlan(ctx, h);
      return null;
    }
    const { RUN_TOKEN_ENV } = await loadEngine();
    const stateDir = resolveStateDir(ctx.env);
    const pool = await agentUserFor(flags, ctx, { stateDir, hosted: true });
    const workflows = await hostedWorkflows(ctx, h);
    const repoDirs = h.repositories.map((r) => r.dir);
    const net = await hostedNetwork(ctx, flags, { agent: agent!, workspaceDir, pool: pool.agentUser, repoDirs, workflows });
    const opts = {
      ...hostedDispatchOptions(flags, ctx, h, workspaceDir, agent!, ctx.env[RUN_TOKEN_ENV] ?? ''),
      ...pool,
      workflows,
      network: net.network,
      networkLine: net.line,
      // A runner's image has no git identity of its own: the agents' commits get svc's bot.
      gitIdentity: await gitIdentityFor(flags, h.repositories[0]?.dir ?? workspaceDir, ctx.env),
    };
    // Pull requests: GitHub's REST API with the run's installation token, every wait within --max-wait.
    const pullRequests = {
      apiUrl: pullRequestOptions(flags, ctx, true).githubApiUrl,
      maxWaitMs: resolveMaxWaitMs(ctx),
      onWait: (line: string) => ctx.out.info(line),
    };
    const summary = await runUnderProgress(ctx, (progress) =>
      startHostedRun(opts, h, { stateDir, output: progress, signal: ctx.interrupts.signal, pullRequests }),
    );
    printSummary(ctx, summary);
    return summary;
  } finally {
    await h.dispose();
  }
}
