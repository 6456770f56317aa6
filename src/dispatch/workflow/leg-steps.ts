// A card's leg inside the repository's workflow: ports reserved, files copied, setup, then the agent
// and the check (verify) as many times as verify_attempts allows, then teardown whatever happened.
// Every step runs where the agent runs (its folder, its user, its environment), its output goes to
// the leg's log (and to the service only with --send-logs), and the agent's spend adds up over the
// attempts. Only the outcome changes for the engine: a failed check is a failed leg.
import { formatDuration } from '../../html/timeline.js';
import { agentEnv } from '../agent/env.js';
import type { LegResult } from '../agent/types.js';
import type { LegLog } from '../wire/leg-log.js';
import type { LegContext } from '../leg-context.js';
import type { FenceHooks } from '../fence/index.js';
import { reasonLine, repoOf, workflowOf } from '../leg-context.js';
import { checkFailedPrompt } from '../prompt.js';
import { copyFiles, exclusionEnv, filesToCopy, removeCopies, type StepPlace } from './copy.js';
import type { LegCheck } from '../ports.js';
import type { StepName, Workflow } from './policy.js';
import { reservePorts, type PortBlock } from './ports.js';
import { runStep, stepOutcome } from './run-step.js';

export type { StepPlace } from './copy.js';

/** Lines of a failed check's output kept for the prompt, the summary and the report. */
const CHECK_TAIL_LINES = 60;
const CHECK_TAIL_BYTES = 8_000;

// CSI/OSC sequences and other controls: the tail is read by an agent and shown in reports.
const ESCAPES = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g;

function tailText(text: string): string {
  const lines = text.replace(/\r\n?/g, '\n').replace(ESCAPES, '').replace(/\n+$/, '').split('\n').slice(-CHECK_TAIL_LINES).join('\n');
  return lines.length > CHECK_TAIL_BYTES ? lines.slice(-CHECK_TAIL_BYTES) : lines;
}

/** A step's output into the leg's log; `tail` is what it printed last, for a failed check. */
function stepPipe(log: LegLog) {
  let kept = '';
  const pipe = log.pipe({ onText: (t) => (kept = (kept + t).slice(-4 * CHECK_TAIL_BYTES)) });
  // With --send-logs a step's output goes out when the step ends (end flushes), not only with the leg.
  return { push: (chunk: Buffer) => pipe.write(chunk), end: () => pipe.end(), tail: () => tailText(kept) };
}

export interface WorkflowLeg {
  ctx: LegContext;
  key: string;
  branch: string;
  /** Where the agent runs: the steps run there too, as the same user. */
  place: StepPlace & {
    /** Puts the leg's network fence up (docs/trust.md): after setup, before the agent; its variables for the rest. */
    fence?: (ownPorts: { first: number; count: number } | null) => Promise<FenceHooks>;
  };
  prompt: string;
  /** The leg's log: every step writes there, as the agent does. */
  log: LegLog;
  /** Runs the agent once (with this context: its spend is counted over the attempts). */
  attempt(ctx: LegContext, prompt: string): Promise<LegResult>;
}

/** The leg's workflow around its agent; without a workflow, the agent alone. Never rejects for a step. */
export async function runWorkflowLeg(leg: WorkflowLeg): Promise<LegResult> {
  const { ctx, key, place } = leg;
  const wf = workflowOf(ctx, key);
  if (!wf) {
    if (!place.fence) return leg.attempt(ctx, leg.prompt);
    const fenced = await place.fence(null).catch((e: Error) => fenceFailed(ctx, e));
    return 'env' in fenced ? leg.attempt(fencedContext(ctx, fenced, { ...ctx.workflowEnv }), leg.prompt) : fenced;
  }
  const started = Date.now();
  const run = new WorkflowRun(leg, wf);
  let result: LegResult;
  try {
    result = (await run.prepare()) ?? (await run.agentAndCheck());
  } catch (error) {
    result = failed(`workflow: ${reasonLine(error instanceof Error ? error.message : String(error), ctx.opts)}`);
  }
  // Teardown whatever the outcome; its failure is logged, never the leg's.
  await run.teardown();
  const spend = Object.fromEntries(Object.entries(run.spent).filter(([, v]) => v !== undefined));
  return { ...result, ...spend, durationMs: Date.now() - started, check: run.check, attempts: run.attempts };
}

interface StepAnswer {
  ok: boolean;
  outcome: string;
  exitCode: number | null;
  tail: () => string;
  interrupted: boolean;
}

/** One leg's workflow as it goes: what it reserved, copied and spent, and the environment its steps get. */
class WorkflowRun {
  ports: PortBlock | null = null;
  copied: string[] = [];
  excluded = { env: {} as Record<string, string>, dispose() {} };
  /** What the agent and the steps get on top of the agent's environment: ports, excludes, the fence's. */
  extra: Record<string, string> = {};
  stepEnv: Record<string, string> = {};
  wrap: FenceHooks['wrap'];
  check: LegCheck = { status: 'none', command: null, exitCode: null, output: null };
  attempts = 0;
  readonly spent: Pick<LegResult, 'costUsd' | 'tokensIn' | 'tokensOut'> = {};

  constructor(
    readonly leg: WorkflowLeg,
    readonly wf: Workflow,
  ) {}

  /** The agent's environment (never svc's credentials), less the prompt file, which is the agent's. */
  private base(extra: Record<string, string>): Record<string, string> {
    const { ctx, key, place, branch } = this.leg;
    const env = agentEnv(ctx.opts, { SVC_CARD_KEY: key, SVC_RUN_ID: ctx.runId, SVC_PROMPT_FILE: '', SVC_WORKDIR: place.cwd, SVC_BRANCH: branch });
    delete (env as Record<string, string | undefined>).SVC_PROMPT_FILE;
    return place.env({ ...env, ...extra });
  }

  async step(name: StepName, command: string): Promise<StepAnswer> {
    const { ctx, key, place, log } = this.leg;
    log.note(`${name}: ${command}`);
    const out = stepPipe(log);
    const wrap = this.wrap;
    const r = await runStep({
      command,
      cwd: place.cwd,
      env: this.stepEnv,
      user: place.user,
      timeoutMs: this.wf.timeouts[name],
      killGraceMs: ctx.opts.timeouts.killGraceMs,
      // Teardown runs after an interruption too: it is what stops the leg's servers.
      ...(name === 'teardown' ? {} : { signal: ctx.signal }),
      onOutput: (c) => out.push(c),
      ...(wrap && name !== 'setup' ? { wrap } : {}),
      ...(ctx.onAgentGroup ? { onGroup: (e: 'start' | 'end', pgid: number) => ctx.onAgentGroup!(key, e, pgid) } : {}),
    });
    out.end();
    const outcome = stepOutcome(r, formatDuration(this.wf.timeouts[name]));
    log.note(`${name}: ${outcome} (${formatDuration(r.durationMs)})`);
    return { ok: r.exitCode === 0 && !r.stopped && !r.error, outcome, exitCode: r.exitCode, tail: out.tail, interrupted: r.stopped === 'interrupted' };
  }

  /** Ports, copies, setup, then the fence: the failed leg when one of them fails, else null. */
  async prepare(): Promise<LegResult | null> {
    const { ctx, key, place, log } = this.leg;
    const wf = this.wf;
    if (wf.ports) {
      const ports = await reservePorts(wf.ports, { stateDir: ctx.deps.stateDir });
      this.ports = ports;
      log.note(`ports: SVC_PORT=${ports.first}${ports.count > 1 ? ` (${ports.first}-${ports.first + ports.count - 1})` : ''}`);
    }
    if (wf.copy.length) {
      const { root, files } = await filesToCopy(repoOf(ctx, key), wf.copy);
      const done = await copyFiles(place, root, files);
      this.copied = done.copied;
      for (const line of done.lines) log.note(line);
      if (!files.length) log.note(`copy: no untracked file of ${root} matches ${wf.copy.join(' ')}`);
      this.excluded = exclusionEnv(this.copied, ctx.opts.env);
    }
    const ports = this.ports;
    this.extra = { ...(ports ? { SVC_PORT: String(ports.first), SVC_PORT_COUNT: String(ports.count) } : {}), ...this.excluded.env };
    this.stepEnv = this.base(this.extra);
    // Nothing of the leg runs yet: whatever holds a port of its block now is a stranger.
    const squatted = await ports?.inUse(null);
    if (squatted) return failed(squatted);
    for (const command of wf.setup) {
      const s = await this.step('setup', command);
      if (!s.ok) return failed(s.interrupted ? 'interrupted' : `setup failed (${s.outcome})`);
    }
    if (!place.fence) return null;
    // Setup ran open; nothing it started runs on inside the fence.
    await place.quiesce?.();
    const fenced = await place.fence(ports ? { first: ports.first, count: ports.count } : null).catch((e: Error) => fenceFailed(ctx, e));
    if (!('env' in fenced)) return fenced;
    this.extra = fenced.env(this.extra);
    this.stepEnv = this.base(this.extra);
    this.wrap = fenced.wrap;
    return null;
  }

  /** The agent, then the check, as many times as verify_attempts allows. */
  async agentAndCheck(): Promise<LegResult> {
    const leg = this.leg;
    const { ctx, key, place, log } = leg;
    const spent = this.spent;
    // The agent sees the same ports and excludes; --max-cost hears the leg's spend over all attempts.
    const agentCtx: LegContext = {
      ...ctx,
      workflowEnv: this.extra,
      ...(this.wrap ? { fenceWrap: this.wrap } : {}),
      ...(ctx.onSpend ? { onSpend: (k: string, cost: number) => ctx.onSpend!(k, (spent.costUsd ?? 0) + cost) } : {}),
    };
    let prompt = leg.prompt;
    const verify = ctx.mode === 'review' ? null : this.wf.verify;
    for (;;) {
      this.attempts++;
      const r = await leg.attempt(agentCtx, prompt);
      spent.costUsd = add(spent.costUsd, r.costUsd);
      spent.tokensIn = add(spent.tokensIn, r.tokensIn);
      spent.tokensOut = add(spent.tokensOut, r.tokensOut);
      if (r.outcome !== 'succeeded' || !verify) return r;
      // The check decides on the work as the agent left it: nothing of the uid runs on past this,
      // and a port of the leg held by another uid, before or after its check, could have answered it.
      await place.quiesce?.();
      const checked = (await place.head?.()) ?? null;
      const before = await strangerOnPorts(this.ports, place);
      if (before) return { ...r, outcome: 'failed', reason: before };
      const v = await this.step('verify', verify);
      const after = await strangerOnPorts(this.ports, place);
      this.check = { status: v.ok && !after ? 'passed' : 'failed', command: verify, exitCode: v.exitCode, output: after ?? (v.ok ? null : v.tail()) };
      if (after) return { ...r, outcome: 'failed', reason: after };
      if (v.ok) return checked ? { ...r, checkedHead: checked } : r;
      if (v.interrupted) return { ...r, outcome: 'failed', reason: 'interrupted' };
      if (this.attempts > this.wf.verifyAttempts || ctx.signal.aborted) return { ...r, outcome: 'failed', reason: `verify failed (${v.outcome})` };
      log.note(`attempt ${this.attempts + 1} of ${this.wf.verifyAttempts + 1}: the agent again, with the check's output`);
      ctx.stream.push({ workItemKey: key, disposition: 'running', sessionBranch: leg.branch });
      prompt = checkFailedPrompt(leg.prompt, {
        command: verify,
        outcome: v.outcome,
        output: this.check.output ?? '',
        attempt: this.attempts + 1,
        of: this.wf.verifyAttempts + 1,
      });
      await place.writePrompt?.(prompt);
    }
  }

  /** Teardown, the copies removed, the ports freed: after every outcome. */
  async teardown(): Promise<void> {
    const { place, log } = this.leg;
    for (const command of this.wf.teardown) await this.step('teardown', command);
    await removeCopies(place, this.copied).catch((e: Error) => log.note(`could not remove the copied files: ${e.message.split('\n')[0]}`));
    this.excluded.dispose();
    this.ports?.release();
  }
}

function add(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : a + b;
}

/** With an agent user, whose sockets are told apart by uid: why a port of the leg's block is another's, or null. */
async function strangerOnPorts(ports: PortBlock | null, place: StepPlace): Promise<string | null> {
  return ports && place.user ? ports.inUse(place.user.uid) : null;
}

/** The context an agent runs in behind the fence: its variables, and its namespace as a normal user. */
export function fencedContext(ctx: LegContext, hooks: FenceHooks, env: Record<string, string>): LegContext {
  return { ...ctx, workflowEnv: hooks.env(env), ...(hooks.wrap ? { fenceWrap: hooks.wrap } : {}) };
}

function fenceFailed(ctx: LegContext, error: Error): LegResult {
  return failed(`could not put the network fence up: ${reasonLine(error.message, ctx.opts)}`);
}

function failed(reason: string): LegResult {
  return { exitCode: null, signal: null, outcome: 'failed', reason, durationMs: 0 };
}
