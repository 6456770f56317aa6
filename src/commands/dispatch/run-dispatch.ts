// The eight dispatch commands, each in one of three modes: inside a hosted runner's container the
// run decides what runs (hosted/run.ts); `--hosted` opens a run for a runner and runs nothing here;
// otherwise the run is selected, opened and run here. Flags become the engine's typed options, the
// real client goes behind the engine's port, progress goes to stderr, the summary (or one JSON
// document) comes at the end, with the exit code the engine decided.
import { resolve } from 'node:path';
import type { ApiClient } from '../../api/client.js';
import type { DispatchCommand } from '../../contract/types.js';
import { loadEngine, openHostedRun, resolveStateDir, startDispatch } from '../../dispatch/index.js';
import type { RepoHead, RunBase } from '../../dispatch/git/worktree.js';
import type { DispatchOptions } from '../../dispatch/lifecycle/types.js';
import type { RunProgress } from '../../ui/run-progress.js';
import { connect } from '../connect.js';
import type { Context } from '../context.js';
import { UsageError } from '../exit-codes.js';
import { resolveBaseUrl, resolveMaxWaitMs, resolveToken } from '../settings.js';
import { continuedFlags } from './continue-flags.js';
import { printSummary, runUnderProgress } from './engine-tail.js';
import { DISPATCH_FLAGS, type DispatchFlags } from './flags.js';
import { checkHostedFlags, refuseHostedAuto } from './hosted-open.js';
import { networkFor } from './network-options.js';
import { pullRequestOptions } from './pr-options.js';
import { checkAgentProgram, checkProject, checkRepository, checkWorkingTree } from './preflight.js';
import { dispatchProject, projectOfRun } from './project.js';
import { planReports, writeRunReports } from './reports.js';
import { agentChoice, agentUserFor, attemptOptions, flagOptions, gitIdentityFor, workflowFor } from './run-options.js';

/**
 * Turns flags into the engine's options; every bad value is a one-line usage error. The project of
 * `continue` comes from its run, which is read later: it is left empty here. `token` is asked once
 * the typed values passed.
 */
export function dispatchOptions(command: DispatchCommand, keys: string[], flags: DispatchFlags, ctx: Context, token: () => string): DispatchOptions {
  const lanes = {
    ...(flags.priority ? { priority: flags.priority } : {}),
    ...(flags.assignee ? { assignee: flags.assignee } : {}),
    ...(flags.sprint ? { sprint: flags.sprint } : {}),
    ...(flags.ancestor ? { ancestor: flags.ancestor } : {}),
    ...(flags.kind ? { kind: flags.kind } : {}),
  };
  // The values typed on this command line are checked before what is missing from it: a bad
  // `--timeout abc` is what the user hears about, not the token or the agent they had not given yet.
  const filled = flagOptions(DISPATCH_FLAGS, flags, ctx);
  const secret = token();
  return {
    command,
    keys,
    projectKey: command === 'continue' ? '' : dispatchProject(command, keys, flags.project, ctx),
    baseUrl: resolveBaseUrl(ctx),
    repo: resolve(ctx.cwd, flags.repo ?? ctx.env.SVC_REPO ?? '.'),
    agent: agentChoice(flags, ctx, !flags.dryRun && !flags.hosted),
    ...filled,
    giveUpAfterMs: resolveMaxWaitMs(ctx),
    ...(flags.reconcile === false ? { reconcile: false as const } : {}),
    ...(Object.keys(lanes).length ? { lanes } : {}),
    push: flags.push === true,
    ...prLocal(flags, ctx),
    // gh's own token (GH_TOKEN in CI) is never the agent's, and never in a body svc writes either.
    secrets: [secret, ...[ctx.env.SVC_RUN_TOKEN, ctx.env.GH_TOKEN, ctx.env.GITHUB_TOKEN].filter((t): t is string => Boolean(t))],
    env: ctx.env,
  };
}

/** `--pr` on a local run: off unless asked or stored; it implies `--push` (a PR needs the branch on the remote). */
function prLocal(flags: DispatchFlags, ctx: Context): Pick<DispatchOptions, 'pr' | 'draft' | 'push'> {
  const { pr, draft } = pullRequestOptions(flags, ctx, false);
  if (pr && flags.push === false) throw new UsageError('--pr needs the branch pushed: drop --no-push or pass --no-pr');
  return { pr, draft, ...(pr || flags.push ? { push: true } : {}) };
}

/** One dispatch command as typed: which command, its positional arguments, and its flags. */
export interface DispatchCommandOptions extends DispatchFlags {
  command: DispatchCommand;
  keys: string[];
}

export async function runDispatchCommand(options: DispatchCommandOptions, ctx: Context): Promise<void> {
  const { command, keys, ...flags } = options;
  const { isHostedEnvironment } = await loadEngine();
  if (isHostedEnvironment(ctx.env)) return runInHostedRunner(command, keys, flags, ctx);
  if (flags.hosted) return openForHostedRunner(command, keys, flags, ctx);
  return runHere(command, keys, flags, ctx);
}

/** Inside a hosted container the run decides (docs/hosted.md): its command, cards and scope. */
async function runInHostedRunner(command: DispatchCommand, keys: string[], flags: DispatchFlags, ctx: Context): Promise<void> {
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
}

/**
 * What a run opened from here starts with, in either mode: the flags (a `continue` adds its
 * original run's), the options, the reports asked for, and what would refuse the run before any
 * request: the cost cap, the --jq filter (one that does not compile would lose a whole run's summary).
 */
async function optionsOfFlags(command: DispatchCommand, keys: string[], typed: DispatchFlags, ctx: Context) {
  const flags = command === 'continue' && keys.length === 1 ? continuedFlags(typed, resolveStateDir(ctx.env), keys[0]!) : typed;
  const opts = dispatchOptions(command, keys, flags, ctx, () => resolveToken(ctx));
  const reports = await planReports(flags.report, ctx);
  (await loadEngine()).checkMaxCost(opts);
  await ctx.out.checkJq();
  return { flags, opts, reports };
}

/** The client of a run opened from here; a retry line goes through the progress view once it runs. */
function clientFor(ctx: Context, progress: () => RunProgress | undefined): ApiClient {
  return connect(ctx, { interruptible: false, notice: (line) => (progress() ? progress()!.warn(line) : ctx.out.info(ctx.out.style.dim(line))) });
}

/** The run's project: a `continue`'s is its run's; any other must exist. */
async function settleProject(api: ApiClient, opts: DispatchOptions, flags: DispatchFlags, ctx: Context): Promise<void> {
  if (opts.command === 'continue') opts.projectKey = projectOfRun(await api.getDispatchRun(opts.keys[0]!), flags.project, ctx);
  else await checkProject(api, opts.projectKey);
}

/** `--hosted`: the run is opened for a hosted runner, printed, and nothing runs here. */
async function openForHostedRunner(command: DispatchCommand, keys: string[], typed: DispatchFlags, ctx: Context): Promise<void> {
  // The flags as typed: not those `continue` takes from a recorded run.
  checkHostedFlags(typed);
  const { flags, opts } = await optionsOfFlags(command, keys, typed, ctx);
  const api = clientFor(ctx, () => undefined);
  try {
    await settleProject(api, opts, flags, ctx);
    refuseHostedAuto(opts);
    const hosted = await openHostedRun(opts, { client: api, stateDir: resolveStateDir(ctx.env) });
    if (!hosted.opened) return ctx.out.info(hosted.note);
    const run = hosted.opened;
    if (ctx.out.json) return ctx.out.document(run);
    ctx.out.data(run.run.id);
    const cards = `${run.run.cards.length} ${run.run.cards.length === 1 ? 'card' : 'cards'}`;
    ctx.out.info(`Opened hosted run ${run.run.id} (${cards})${run.created ? '' : ' (existing run for this idempotency key)'}; a hosted runner executes it.`);
  } finally {
    await api.close();
  }
}

/** A run selected, opened and run here. */
async function runHere(command: DispatchCommand, keys: string[], typed: DispatchFlags, ctx: Context): Promise<void> {
  const { flags, opts, reports } = await optionsOfFlags(command, keys, typed, ctx);
  await checkLocalRun(opts, flags, ctx);
  let progress: RunProgress | undefined;
  const api = clientFor(ctx, () => progress);
  try {
    await settleProject(api, opts, flags, ctx);
    const stateDir = resolveStateDir(ctx.env);
    if (!opts.dryRun) {
      Object.assign(opts, await agentUserFor(flags, ctx, { stateDir, hosted: false }));
      // docs/trust.md: decided (or refused, exit 2) before the run opens, and said once.
      const net = await networkFor(flags, ctx, { agent: opts.agent, workflow: opts.workflow, repo: opts.repo, pool: opts.agentUser });
      opts.network = net.network;
      opts.networkLine = net.line;
    }
    // From here a signal winds the run down (agents stopped, the run closed) instead of cutting it.
    ctx.interrupts.handle?.('dispatch');
    const summary = await runUnderProgress(ctx, (view) => {
      progress = view;
      return startDispatch(opts, { client: api, stateDir, output: view, signal: ctx.interrupts.signal });
    });
    await writeRunReports(ctx, reports, summary, opts.secrets);
    printSummary(ctx, summary);
  } finally {
    await api.close();
  }
}

/** The run's base, or the one line that says why the checkout cannot be one. */
async function baseOf(repo: string, head: RepoHead | null): Promise<RunBase> {
  const { resolveBase, WorktreeError } = await loadEngine();
  try {
    return await resolveBase(repo, head);
  } catch (error) {
    if (error instanceof WorktreeError) throw new UsageError(error.message);
    throw error;
  }
}

/**
 * What would fail every leg of a run here is refused before anything is opened, in a dry run as
 * in the real run; and the run's base, identity, workflow and attempts are settled now, once.
 */
async function checkLocalRun(opts: DispatchOptions, flags: DispatchFlags, ctx: Context): Promise<void> {
  const { command } = opts;
  const onPullRequest = command === 'fix' || command === 'review';
  const head = await checkRepository(opts.repo, flags.repo ? '--repo' : ctx.env.SVC_REPO ? 'SVC_REPO' : 'the current directory', !onPullRequest);
  checkAgentProgram(opts.agent, opts.repo, ctx.env.PATH);
  const { credentialsInGitConfig, gitCredentialsWarning, checkMaxCost, readGitConfig, hasOrigin } = await loadEngine();
  // What git is asked from here on does not depend on each other's answers (but the workflow on
  // the base): asked side by side, each answer then taken, and said, in the order below.
  const settled = <T>(p: Promise<T>) => (p.catch(() => undefined), p);
  const listing = readGitConfig(opts.repo, ctx.env);
  // Every leg starts from this base and the rules come from it, never from a branch an agent wrote
  // since (docs/workflow.md, "The base commit").
  const base = settled(baseOf(opts.repo, head));
  const identity = settled(gitIdentityFor(flags, opts.repo, ctx.env, listing));
  // A token in the repository's own git config is one the agents can read: said once, at the start.
  const credentials = settled(credentialsInGitConfig(opts.repo, listing));
  // .svc/workflow.yml of the base commit: a mistake there stops the command here.
  const rules = settled(base.then((b) => workflowFor(flags, opts.repo, b.sha, b.branch ?? undefined)));
  // fix and review work on a fetched pull request head: the local tree is not theirs either way.
  const dirty = onPullRequest ? Promise.resolve(null) : settled(checkWorkingTree(opts.repo, !opts.worktree));
  opts.base = await base;
  opts.gitIdentity = await identity;
  // A CI job's workspace goes when the job ends, and the agents' branches with it.
  if (ctx.env.CI && !opts.push && !opts.pr && !opts.dryRun && command !== 'review')
    ctx.out.warn("CI is set and this run has no --push or --pr: implemented work stays on svc/ branches in this job's workspace, which goes when the job ends");
  if (!onPullRequest) opts.baseRef = opts.base.sha;
  // The listing names origin's URL: selection need not start a `git remote` to learn it has one.
  if ((await listing.catch(() => null))?.some((e) => e.key === 'remote.origin.url' && e.value)) void hasOrigin(opts.repo, true);
  const held = await credentials;
  if (held.length) ctx.out.warn(gitCredentialsWarning(opts.repo, held));
  const { workflow, hint } = await rules;
  opts.workflow = workflow;
  Object.assign(opts, attemptOptions(flags, opts.agent, workflow));
  for (const other of opts.agents ?? []) {
    checkAgentProgram(other, opts.repo, ctx.env.PATH);
    checkMaxCost({ agent: other, maxCostUsd: opts.maxCostUsd ?? null });
  }
  opts.workflowFlags = { ...(flags.verify !== undefined ? { verify: flags.verify } : {}), ...(flags.setup !== undefined ? { setup: flags.setup } : {}) };
  if (hint) ctx.out.warn(hint);
  const uncommitted = await dirty;
  if (uncommitted) ctx.out.warn(uncommitted);
}
