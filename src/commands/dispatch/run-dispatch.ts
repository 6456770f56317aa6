// The eight dispatch commands: flags → the engine's typed options, the real client behind the
// engine's port, progress on stderr, the summary (or one JSON document) at the end, and the exit
// code the engine decided.
import { resolve } from 'node:path';
import type { DispatchCommand } from '../../contract/types.js';
import { dispatchServiceOf } from '../../dispatch/wire/service.js';
import { parseDuration } from '../../dispatch/duration.js';
import { checkMaxCost, runDispatch } from '../../dispatch/lifecycle/dispatch.js';
import { dispatchDeps } from '../../dispatch/lifecycle/deps.js';
import type { DispatchOptions } from '../../dispatch/lifecycle/types.js';
import { AGENT_FORMATS } from '../../dispatch/agent/spend.js';
import { pushToOrigin } from '../../dispatch/git/delivery.js';
import { noteHostedOpen } from '../../dispatch/state/runs.js';
import { isHostedEnvironment } from '../../dispatch/hosted/execution.js';
import { readRunRecord, resolveStateDir } from '../../dispatch/state/folder.js';
import type { RunProgress } from '../../ui/run-progress.js';
import { connect } from '../connect.js';
import type { Context } from '../context.js';
import { UsageError } from '../exit-codes.js';
import { resolveBaseUrl, resolveToken } from '../settings.js';
import { checkAgentProgram, checkProject, checkRepository, checkWorkingTree } from './preflight.js';
import { dispatchProject, projectOfRun } from './project.js';
import type { DispatchFlags } from './flags.js';
import { agentChoice, agentUserFor, attemptOptions, gitIdentityFor, legOptions, workflowFor } from './run-options.js';
import { networkFor } from './network-options.js';
import { checkHostedFlags, openHosted } from './hosted-open.js';
import { resolveBase, WorktreeError, type RunBase } from '../../dispatch/git/worktree.js';
import { wholeNumber } from '../flag-values.js';
import { planReports, writeRunReports } from './reports.js';
import { printSummary, runUnderProgress } from './engine-tail.js';
import { createGhWriter } from '../../dispatch/pr/gh.js';
import { createRedactor } from '../../dispatch/redact.js';
import { pullRequestOptions } from './pr-options.js';
import { credentialsInGitConfig, gitCredentialsWarning } from '../../dispatch/git/config-credentials.js';

const DEFAULT_HEARTBEAT = '60s';

/**
 * Turns flags into the engine's options; every bad value is a one-line usage error. The project of
 * `continue` comes from its run, which is read later: it is left empty here.
 */
export function dispatchOptions(command: DispatchCommand, keys: string[], flags: DispatchFlags, ctx: Context, token: string): DispatchOptions {
  const heartbeat =
    ctx.env.SVC_HEARTBEAT_INTERVAL && !flags.heartbeatInterval ? ctx.env.SVC_HEARTBEAT_INTERVAL : (flags.heartbeatInterval ?? DEFAULT_HEARTBEAT);
  const lanes = {
    ...(flags.priority ? { priority: flags.priority } : {}),
    ...(flags.assignee ? { assignee: flags.assignee } : {}),
    ...(flags.sprint ? { sprint: flags.sprint } : {}),
    ...(flags.ancestor ? { ancestor: flags.ancestor } : {}),
    ...(flags.kind ? { kind: flags.kind } : {}),
  };
  return {
    command,
    keys,
    projectKey: command === 'continue' ? '' : dispatchProject(command, keys, flags.project, ctx),
    baseUrl: resolveBaseUrl(ctx),
    repo: resolve(ctx.cwd, flags.repo ?? ctx.env.SVC_REPO ?? '.'),
    agent: agentChoice(flags, ctx, !flags.dryRun && !flags.hosted),
    maxCards: wholeNumber(flags.max, '--max') ?? null,
    ...(flags.perRun !== undefined ? { perRun: wholeNumber(flags.perRun, '--per-run') } : {}),
    ...legOptions(flags, ctx),
    ...(flags.idempotencyKey ? { idempotencyKey: flags.idempotencyKey } : {}),
    heartbeatIntervalMs: parseDuration(heartbeat, flags.heartbeatInterval ? '--heartbeat-interval' : 'SVC_HEARTBEAT_INTERVAL'),
    ...(flags.reconcile === false ? { reconcile: false as const } : {}),
    worktree: flags.worktree !== false,
    dryRun: Boolean(flags.dryRun),
    ...(Object.keys(lanes).length ? { lanes } : {}),
    retryFailed: Boolean(flags.retryFailed),
    rerun: Boolean(flags.rerun),
    push: flags.push === true,
    ...prLocal(flags, ctx),
    // gh's own token (GH_TOKEN in CI) is never the agent's, and never in a body svc writes either.
    secrets: [token, ...[ctx.env.SVC_RUN_TOKEN, ctx.env.GH_TOKEN, ctx.env.GITHUB_TOKEN].filter((t): t is string => Boolean(t))],
    env: ctx.env,
  };
}

/** `--pr` on a local run: off unless asked or stored; it implies `--push` (a PR needs the branch on the remote). */
function prLocal(flags: DispatchFlags, ctx: Context): Pick<DispatchOptions, 'pr' | 'draft' | 'push'> {
  const { pr, draft } = pullRequestOptions(flags, ctx, false);
  if (pr && flags.push === false) throw new UsageError('--pr needs the branch pushed: drop --no-push or pass --no-pr');
  return { pr, draft, ...(pr || flags.push ? { push: true } : {}) };
}

/**
 * `continue RUN_ID`: the agent and flags of the original run (run.json `options`) where the user
 * passed none; flags still win. `--on-failure` arrives as `halt` when not given (the flag's
 * default), so `halt` counts as not given here.
 */
export function continueFlags(flags: DispatchFlags, recorded: Record<string, unknown> | undefined): DispatchFlags {
  if (!recorded) return flags;
  const out: DispatchFlags = { ...flags };
  const agent = recorded.agent as { agent?: unknown; agentCmd?: unknown; model?: unknown } | undefined;
  if (!flags.agent && !flags.agentCmd && agent && typeof agent === 'object') {
    if (typeof agent.agent === 'string') out.agent = [agent.agent];
    if (typeof agent.agentCmd === 'string') out.agentCmd = agent.agentCmd;
    const format = Object.entries(AGENT_FORMATS).find(([, f]) => f === (agent as { stream?: unknown }).stream)?.[0];
    if (typeof agent.agentCmd === 'string' && format) out.agentFormat = format;
    if (!flags.model && typeof agent.model === 'string') out.model = [agent.model];
    // Best-of-N: each attempt's agent and model, as the original run had them.
    const each = Array.isArray(recorded.agents) ? (recorded.agents as ({ agent?: unknown; model?: unknown } | null)[]) : [];
    const names = each.map((a) => a?.agent);
    const models = each.map((a) => a?.model);
    if (names.length > 1 && names.every((a): a is string => typeof a === 'string')) out.agent = names;
    if (!flags.model && models.length > 1 && models.every((m): m is string => typeof m === 'string')) out.model = models;
  }
  if (flags.attempts === undefined && typeof recorded.attempts === 'number') out.attempts = String(recorded.attempts);
  if (flags.allAttempts === undefined && recorded.allAttempts === true) out.allAttempts = true;
  if (flags.pushAttempts === undefined && recorded.pushAttempts === true) out.pushAttempts = true;
  if (flags.onFailure === undefined && (recorded.onFailure === 'halt' || recorded.onFailure === 'continue')) {
    out.onFailure = recorded.onFailure;
  }
  if (flags.parallel === undefined && typeof recorded.parallel === 'number') out.parallel = String(recorded.parallel);
  if (flags.sendLogs === undefined && typeof recorded.sendLogs === 'boolean') out.sendLogs = recorded.sendLogs;
  if (flags.allowEmpty === undefined && recorded.allowEmpty === true) out.allowEmpty = true;
  if (flags.maxCost === undefined && typeof recorded.maxCostUsd === 'number') out.maxCost = String(recorded.maxCostUsd);
  if (flags.worktree !== false && recorded.worktree === false) out.worktree = false;
  // The workflow's flags of the original run (.svc/workflow.yml itself is read again from the base).
  if (flags.verify === undefined && (recorded.verify === false || typeof recorded.verify === 'string')) out.verify = recorded.verify;
  if (flags.setup === undefined && typeof recorded.setup === 'string') out.setup = recorded.setup;
  // The names the original run passed to its agents (their values are read from this environment).
  if (flags.agentEnv === undefined && Array.isArray(recorded.agentEnv)) out.agentEnv = recorded.agentEnv.filter((n): n is string => typeof n === 'string');
  // A continued run writes pull requests as the original did (which implies its push).
  if (flags.pr === undefined && recorded.pr === true) out.pr = true;
  if (flags.draft === undefined && recorded.draft === true) out.draft = true;
  const t = recorded.timeouts as Record<string, unknown> | undefined;
  const ms = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? `${Math.round(v)}ms` : undefined);
  if (t && typeof t === 'object') {
    if (flags.idleTimeout === undefined && ms(t.idleMs)) out.idleTimeout = ms(t.idleMs);
    if (flags.cardTimeout === undefined && ms(t.cardMs)) out.cardTimeout = ms(t.cardMs);
    if (flags.killGrace === undefined && ms(t.killGraceMs)) out.killGrace = ms(t.killGraceMs);
    if (flags.timeout === undefined && ms(t.runMs)) out.timeout = ms(t.runMs);
  }
  return out;
}

/** One dispatch command as typed: which command, its positional arguments, and its flags. */
export interface DispatchCommandOptions extends DispatchFlags {
  command: DispatchCommand;
  keys: string[];
}

/** The run's base, or the one line that says why the checkout cannot be one. */
async function baseOf(repo: string): Promise<RunBase> {
  try {
    return await resolveBase(repo);
  } catch (error) {
    if (error instanceof WorktreeError) throw new UsageError(error.message);
    throw error;
  }
}

export async function runDispatchCommand(options: DispatchCommandOptions, ctx: Context): Promise<void> {
  const { command, keys, ...given } = options;
  let flags: DispatchFlags = given;
  if (isHostedEnvironment(ctx.env)) {
    // Inside a hosted container the run decides (op 26): its command, cards and scope.
    if (flags.hosted) throw new UsageError('--hosted opens a run for a hosted runner; inside a hosted run (SVC_RUN_ID) there is nothing to open');
    const { runHostedCommand } = await import('../hosted/run.js');
    const { printAttachPlan } = await import('../hosted/attach.js');
    const reports = await planReports(flags.report, ctx);
    const summary = await runHostedCommand(ctx, { invokedAs: command, keys, flags }, (c, h) => printAttachPlan(c, h, flags.push !== false));
    if (summary)
      await writeRunReports(
        ctx,
        reports,
        summary,
        [ctx.env.SVC_RUN_TOKEN, ctx.env.SVC_TOKEN].filter((s): s is string => Boolean(s)),
      );
    return;
  }
  if (flags.hosted) checkHostedFlags(flags);
  const token = resolveToken(ctx);
  if (command === 'continue' && keys.length === 1) {
    const recorded = (() => {
      try {
        return readRunRecord(resolveStateDir(ctx.env), keys[0]!)?.options;
      } catch {
        return undefined;
      }
    })();
    flags = continueFlags(flags, recorded);
  }
  const opts = dispatchOptions(command, keys, flags, ctx, token);
  const reports = await planReports(flags.report, ctx);
  checkMaxCost(opts);
  // A --jq that does not compile would lose the summary of a whole run: refused now.
  await ctx.out.checkJq();
  // What would fail every leg is refused before anything is opened, in a dry run as in the real
  // run; a --hosted run's agent and checkout are the runner's, not this machine's.
  if (!flags.hosted) {
    await checkRepository(
      opts.repo,
      flags.repo ? '--repo' : ctx.env.SVC_REPO ? 'SVC_REPO' : 'the current directory',
      command !== 'fix' && command !== 'review',
    );
    checkAgentProgram(opts.agent, opts.repo, ctx.env.PATH);
    // The base is chosen now, once: every leg starts from it and the rules come from it, never
    // from a branch an agent wrote since (docs/workflow.md, "The base commit").
    opts.base = await baseOf(opts.repo);
    opts.gitIdentity = await gitIdentityFor(flags, opts.repo, ctx.env);
    // A CI job's workspace goes when the job ends, and the agents' branches with it.
    if (ctx.env.CI && !opts.push && !opts.pr && !opts.dryRun && command !== 'review')
      ctx.out.warn(
        "CI is set and this run has no --push or --pr: implemented work stays on svc/ branches in this job's workspace, which goes when the job ends",
      );
    if (command !== 'fix' && command !== 'review') opts.baseRef = opts.base.sha;
    // A token in the repository's own git config is one the agents can read: said once, at the start.
    const credentials = await credentialsInGitConfig(opts.repo);
    if (credentials.length) ctx.out.warn(gitCredentialsWarning(opts.repo, credentials));
    // .svc/workflow.yml of the base commit: a mistake there stops the command here.
    const { workflow, hint } = await workflowFor(flags, opts.repo, opts.base.sha, opts.base.branch ?? undefined);
    opts.workflow = workflow;
    Object.assign(opts, attemptOptions(flags, opts.agent, workflow));
    for (const other of opts.agents ?? []) {
      checkAgentProgram(other, opts.repo, ctx.env.PATH);
      checkMaxCost({ agent: other, maxCostUsd: opts.maxCostUsd ?? null });
    }
    opts.workflowFlags = { ...(flags.verify !== undefined ? { verify: flags.verify } : {}), ...(flags.setup !== undefined ? { setup: flags.setup } : {}) };
    if (hint) ctx.out.warn(hint);
    // fix and review work on a fetched pull request head: the local tree is not theirs either way.
    if (command !== 'fix' && command !== 'review') {
      const dirty = await checkWorkingTree(opts.repo, !opts.worktree);
      if (dirty) ctx.out.warn(dirty);
    }
  }
  // A retry line must not cut through the spinner: once the progress view runs, it prints it.
  let progress: RunProgress | undefined;
  const api = connect(ctx, { interruptible: false, notice: (line) => (progress ? progress.warn(line) : ctx.out.info(ctx.out.style.dim(line))) });
  try {
    if (command === 'continue') opts.projectKey = projectOfRun(await api.getDispatchRun(keys[0]!), flags.project, ctx);
    else await checkProject(api, opts.projectKey);
    const service = dispatchServiceOf(api);
    const stateDir = resolveStateDir(ctx.env);
    if (flags.hosted) {
      const hosted = await openHosted(opts, { service, stateDir, openHostedRun: (body) => api.openDispatchRun(body) });
      if (!hosted.opened) return ctx.out.info(hosted.note);
      const run = hosted.opened;
      noteHostedOpen(stateDir, run.run);
      if (ctx.out.json) return ctx.out.document(run);
      ctx.out.data(run.run.id);
      ctx.out.info(
        `Opened hosted run ${run.run.id} (${run.run.cards.length} ${run.run.cards.length === 1 ? 'card' : 'cards'})${run.created ? '' : ' (existing run for this idempotency key)'}; a hosted runner executes it.`,
      );
      return;
    }
    if (!opts.dryRun) {
      Object.assign(opts, await agentUserFor(flags, ctx, { stateDir, hosted: false }));
      // DISPATCH.md §9: decided (or refused, exit 2) before the run opens, and said once.
      const net = await networkFor(flags, ctx, { agent: opts.agent, workflow: opts.workflow, repo: opts.repo, pool: opts.agentUser });
      opts.network = net.network;
      opts.networkLine = net.line;
    }
    // From here a signal winds the run down (agents stopped, the run closed) instead of cutting it.
    ctx.interrupts.handle?.('dispatch');
    const summary = await runUnderProgress(ctx, (view) => {
      progress = view;
      return runDispatch(
        opts,
        dispatchDeps({
          service,
          stateDir,
          output: view,
          signal: ctx.interrupts.signal,
          pushBranch: pushToOrigin,
          ...(opts.pr ? { pullRequests: createGhWriter({ env: ctx.env, redact: createRedactor(opts.secrets) }) } : {}),
        }),
      );
    });
    await writeRunReports(ctx, reports, summary, opts.secrets);
    printSummary(ctx, summary);
  } finally {
    await api.close();
  }
}
