// Running an agent: its command resolved, its output through the leg's log (wire/leg-log.ts: the
// local log always, `body` events with --send-logs, redacted on the way); with --agent-user, in a
// clone of its own.
import { basename, join } from 'node:path';
import { agentEnv } from '../agent/env.js';
import { prepareAgentLeg, type AgentLeg } from '../boundary/clone.js';
import { CLONE_FAILED } from '../boundary/leg-shell.js';
import { acquireAgentUser, killAllOf, type AgentLease } from '../boundary/pool.js';
import { headCommit, isDirty, pinToChecked, stashLeftovers } from '../git/worktree.js';
import { resolveAgentCommand } from '../agent/presets.js';
import { parserFor } from '../agent/streams/index.js';
import type { LegResult } from '../agent/types.js';
import type { PreparedWorktree } from '../ports.js';
import type { DispatchOptions } from './types.js';
import { LegLog } from '../wire/leg-log.js';
import { identityEnv } from '../git/identity.js';
import { reasonLine, repoOf, secretsNow, workflowOf, type LegContext } from '../leg-context.js';
import { fencedContext, runWorkflowLeg } from '../workflow/leg-steps.js';
import { legFencer } from './leg-fence.js';

/** A leg's agent user: its leased uid and its prepared folder (`attach` finishes it). */
export interface AgentSide {
  lease: AgentLease;
  leg: AgentLeg;
}

/**
 * Leases a uid of the run's pool and prepares the leg's folder with `prompt` in it. Made while
 * the card's worktree is (./leg.ts): neither needs the other. Undo with `discardAgentSide`.
 */
export async function openAgentSide(ctx: LegContext, key: string, prompt: string): Promise<AgentSide> {
  const pool = ctx.opts.agentUser;
  if (!pool) throw new Error('no agent user pool');
  const lease = await acquireAgentUser(pool, { ...(ctx.signal ? { signal: ctx.signal } : {}), onWait: (line) => ctx.deps.output.warn(`${key}: ${line}`) });
  try {
    const leg = await prepareAgentLeg({
      user: lease.user,
      repo: repoOf(ctx, key),
      key: legName(ctx, key),
      privateDir: ctx.paths.dir,
      prompt,
      settingsFrom: { home: ctx.opts.env.HOME, env: ctx.opts.env },
    });
    return { lease, leg };
  } catch (error) {
    await lease.release();
    throw error;
  }
}

/** An agent side that will not run (its worktree could not be made): its folder removed, its uid freed. */
export async function discardAgentSide(side: Promise<AgentSide>): Promise<void> {
  const opened = await side.catch(() => null);
  if (!opened) return;
  await opened.leg.dispose().catch(() => undefined);
  await opened.lease.release();
}

/** Runs whose agent-user warning was said (once per run, at its first agent). */
const warned = new WeakSet<DispatchOptions>();
/** Runs whose network line was said (docs/trust.md: once, when the first agent starts). */
const networkSaid = new WeakSet<DispatchOptions>();

/**
 * Runs a leg's agent with `prompt` in `wt`, where it belongs: as svc's user in the worktree, or
 * (--agent-user) as a leased uid in a clone of its own; for a card, within the workflow's steps.
 * Its output goes to `logFile` and (with send-logs) to body events of `eventKey` (undefined:
 * run-scoped). Shared by the legs and run_scope's close-out.
 */
export async function runLegAgent(
  ctx: LegContext,
  wt: PreparedWorktree,
  key: string,
  prompt: string,
  logFile: string,
  eventKey: string | undefined,
  collect?: (chunk: Buffer) => void,
  side?: Promise<AgentSide>,
): Promise<LegResult> {
  // One sink for the leg: the agent, the workflow's steps and the fence's refusals all write through it.
  const log = new LegLog({
    logFile,
    secrets: () => secretsNow(ctx.opts),
    live: ctx.opts.liveSecrets !== undefined,
    bodies: ctx.opts.sendLogs ? { stream: ctx.stream, workItemKey: eventKey } : undefined,
  });
  try {
    if (ctx.opts.networkLine && !networkSaid.has(ctx.opts)) {
      networkSaid.add(ctx.opts);
      ctx.deps.output.info(ctx.opts.networkLine);
    }
    const run: LegRun = { ctx, wt, key, prompt, log, eventKey, ...(collect ? { collect } : {}) };
    return await (ctx.opts.agentUser ? asAgentUser(run, side) : asSvcUser(run));
  } finally {
    log.close();
  }
}

/** One leg's agent run: what runLegAgent was given, with the leg's log open. */
interface LegRun {
  ctx: LegContext;
  wt: PreparedWorktree;
  key: string;
  prompt: string;
  log: LegLog;
  eventKey: string | undefined;
  collect?: (chunk: Buffer) => void;
}

/** The agent as svc's own user, in the card's worktree. */
async function asSvcUser({ ctx, wt, key, prompt, log, eventKey, collect }: LegRun): Promise<LegResult> {
  if (ctx.opts.agentUserWarning && !warned.has(ctx.opts)) {
    warned.add(ctx.opts);
    ctx.deps.output.warn(ctx.opts.agentUserWarning);
  }
  // docs/trust.md: a normal user's fence is a network namespace per program (fence/bwrap.ts).
  const fencer = legFencer(ctx, log, null);
  let result: LegResult;
  try {
    // Workflow: a card's leg runs inside .svc/workflow.yml's steps; a close-out does not.
    if (!eventKey) {
      const c = fencer ? fencedContext(ctx, await fencer.up(null), { ...ctx.workflowEnv }) : ctx;
      return await runAgentOnce(c, wt, key, prompt, log, null, collect);
    }
    result = await runWorkflowLeg({
      ctx,
      key,
      branch: wt.branch,
      place: { cwd: wt.path, user: null, env: (e) => e, head: () => headCommit(wt.path), ...(fencer ? { fence: (p) => fencer.up(p) } : {}) },
      prompt,
      log,
      attempt: (c, p) => runAgentOnce(c, wt, key, p, log, null, collect),
    });
  } finally {
    await fencer?.down().catch((e: Error) => ctx.deps.output.warn(`${key}: could not take the network fence down: ${e.message}`));
  }
  if (fencer) result = { ...result, network: fencer.network };
  // The branch is the commit the check ran on: a commit made after it does not count.
  if (result.checkedHead) {
    const moved = await pinToChecked(wt.path, key, result.checkedHead);
    if (moved) ctx.deps.output.warn(afterCheckLine(key, wt.branch, result.checkedHead, `it is kept on refs/svc/after-check/${key}`));
  }
  return result;
}

/**
 * --agent-user: the agent works as a uid leased for this leg alone, in a clone of its own; its
 * branch comes back here. The uid's every process is killed before it is freed.
 */
async function asAgentUser({ ctx, wt, key, prompt, log, eventKey, collect }: LegRun, side?: Promise<AgentSide>): Promise<LegResult> {
  // What an earlier, failed leg left uncommitted in a reused worktree goes on the stash: this
  // agent's clone starts from the branch and would never see it, and its work could not come back over it.
  let opened: AgentSide;
  try {
    if (!wt.created && (await isDirty(wt.path))) {
      await stashLeftovers(wt.path, `svc: left uncommitted in ${wt.branch} before run ${ctx.runId}`);
      ctx.deps.output.warn(`${key}: uncommitted files an earlier leg left in its worktree are on the stash (git stash list in ${wt.path})`);
    }
    opened = await (side ?? openAgentSide(ctx, key, prompt));
  } catch (error) {
    if (side) await discardAgentSide(side);
    throw error;
  }
  const { lease, leg } = opened;
  let killed = false;
  // docs/trust.md: the fence of this uid, up after setup (leg-steps.ts), down once the uid is empty.
  const fencer = legFencer(ctx, log, lease.user.uid);
  const withNet = (r: LegResult): LegResult => (fencer ? { ...r, network: fencer.network } : r);
  try {
    try {
      await leg.attach(wt);
      // Workflow: the steps run in the agent's clone, as its user, before the clone is
      // collected; they need the clone before the agent, which otherwise makes it as it starts.
      if (eventKey && workflowOf(ctx, key)) await leg.ensureClone();
      // Without workflow steps after it, the agent's own process start collects the leg too.
      else leg.collectWithAgent();
    } catch (error) {
      await leg.dispose().catch(() => undefined);
      throw error;
    }
    const place = {
      cwd: leg.workdir,
      user: leg.user,
      env: (e: Record<string, string>) => leg.env(e),
      writePrompt: (t: string) => leg.writeAsAgent(basename(leg.promptFile), t),
      quiesce: () => leg.quiesce(),
      head: () => leg.head(),
      ...(fencer ? { fence: (ports: { first: number; count: number } | null) => fencer.up(ports) } : {}),
    };
    const result = await (eventKey
      ? runWorkflowLeg({ ctx, key, branch: wt.branch, place, prompt, log, attempt: (c, p) => runAgentOnce(c, wt, key, p, log, leg, collect) })
      : (fencer ? fencer.up(null).then((f) => fencedContext(ctx, f, { ...ctx.workflowEnv })) : Promise.resolve(ctx)).then((c) =>
          runAgentOnce(c, wt, key, prompt, log, leg, collect),
        )
    ).catch(async (error: unknown) => {
      await leg.dispose().catch(() => undefined);
      throw error;
    });
    try {
      // Brings the work back, kills what the uid left running and empties its folder.
      await leg.collect(result.checkedHead ? { pin: result.checkedHead } : {});
      killed = true;
      if (leg.movedAfterCheck && result.checkedHead) ctx.deps.output.warn(afterCheckLine(key, wt.branch, result.checkedHead, 'it is not collected'));
    } catch (error) {
      // The clone (or the bundle) is kept: it holds the only copy of whatever did not come back.
      const why = `could not bring back the agent's work: ${reasonLine(error instanceof Error ? error.message : String(error), ctx.opts)}`;
      ctx.deps.output.warn(`${key}: ${why}${/ is kept in /.test(why) ? '' : ` (its clone is kept at ${leg.workdir})`}`);
      return withNet(result.outcome === 'succeeded' ? { ...result, outcome: 'failed', reason: why } : result);
    }
    if (!leg.cloneMade && result.exitCode === CLONE_FAILED)
      return withNet({ ...result, outcome: 'failed', reason: "could not make the agent's clone (its log says why)" });
    return withNet(result);
  } finally {
    if (fencer) {
      // The rules come down only once nothing of the uid is left to use the way out they closed.
      if (!killed) await killAllOf(lease.user);
      await fencer.down().catch((e: Error) => ctx.deps.output.warn(`${key}: could not take the network fence down: ${e.message}`));
    }
    await lease.release({ killed });
  }
}

/** One run of the agent's program (a workflow may ask for more), its output piped and redacted. */
async function runAgentOnce(
  ctx: LegContext,
  wt: PreparedWorktree,
  key: string,
  prompt: string,
  log: LegLog,
  leg: AgentLeg | null,
  collect?: (chunk: Buffer) => void,
): Promise<LegResult> {
  const { opts, deps } = ctx;
  const promptFile = leg?.promptFile ?? join(ctx.paths.prompts, `${legName(ctx, key)}.md`);
  const workdir = leg?.workdir ?? wt.path;
  const command = resolveAgentCommand(opts.agent, {
    prompt_file: promptFile,
    key,
    workdir,
    branch: wt.branch,
    run_id: ctx.runId,
    prompt,
  });
  const parser = parserFor(command);
  const output = log.pipe({
    onStdout: (chunk) => {
      collect?.(chunk);
      // runAgentProcess fed the parser first: the spend it reports now is the leg's so far.
      const cost = parser?.usage().costUsd;
      if (cost !== undefined) ctx.onSpend?.(key, cost);
    },
  });
  try {
    // An agent user's clone may still be to make: a shell as that user makes it in the leg's
    // folder, then runs the agent (where it starts is read before the clone counts as made).
    const cwd = leg?.startIn ?? workdir;
    const wrapped = leg ? { argv: leg.command(command.argv) } : ctx.fenceWrap ? ctx.fenceWrap(command.argv) : { argv: command.argv };
    return await deps.runAgentProcess({
      argv: wrapped.argv,
      ...(wrapped.onHandle ? { onHandle: wrapped.onHandle } : {}),
      cwd,
      ...(leg && leg.fds().length ? { extraFds: leg.fds() } : {}),
      env: (leg ? (e: Record<string, string>) => leg.env(e) : (e: Record<string, string>) => e)(
        agentEnv(opts, {
          SVC_CARD_KEY: key,
          SVC_RUN_ID: ctx.runId,
          SVC_PROMPT_FILE: promptFile,
          SVC_WORKDIR: workdir,
          SVC_BRANCH: wt.branch,
          ...(ctx.attempt ? { SVC_ATTEMPT: String(ctx.attempt) } : {}),
          ...identityEnv(opts.gitIdentity),
          ...ctx.workflowEnv,
        }),
      ),
      ...(leg ? { user: leg.user } : {}),
      prompt,
      promptVia: command.promptVia,
      promptFile,
      ...(leg ? { promptWritten: true } : {}),
      idleTimeoutMs: opts.timeouts.idleMs,
      cardTimeoutMs: opts.timeouts.cardMs,
      killGraceMs: opts.timeouts.killGraceMs,
      ...(parser ? { parser } : {}),
      // The pipe's own write: the agent's output reaches the leg's log with no step of lifecycle's between.
      onOutput: output.write,
      ...(ctx.onAgentGroup ? { onGroup: (event: 'start' | 'end', pgid: number) => ctx.onAgentGroup!(key, event, pgid) } : {}),
      signal: ctx.signal,
    });
  } finally {
    output.end();
  }
}

/** What a leg's own files are named by: its card, or a best-of-N attempt's `<KEY>-attempt-<n>`. */
function legName(ctx: LegContext, key: string): string {
  return ctx.attempt ? `${key}-attempt-${ctx.attempt}` : key;
}

/** The one line for a branch that moved after its check. */
function afterCheckLine(key: string, branch: string, checked: string, where: string): string {
  return `${key}: something committed after the check; ${branch} stays at the checked commit ${checked.slice(0, 12)} and ${where}`;
}
