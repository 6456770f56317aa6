// A card's leg inside the repository's workflow: ports reserved, files copied, setup, then the agent
// and the check (verify) as many times as verify_attempts allows, then teardown whatever happened.
// Every step runs where the agent runs (its folder, its user, its environment), its output goes to
// the leg's log (and to the service only with --send-logs), and the agent's spend adds up over the
// attempts. Only the outcome changes for the engine: a failed check is a failed leg.
import { formatDuration } from '../../html/timeline.js';
import { agentEnv } from '../agent/env.js';
import type { LegResult } from '../agent/types.js';
import type { LegLog } from '../wire/leg-log.js';
import type { LegContext } from '../lifecycle/leg-context.js';
import type { FenceHooks } from '../lifecycle/leg-fence.js';
import { reasonLine, repoOf, workflowOf } from '../lifecycle/leg-context.js';
import { checkFailedPrompt } from '../prompt.js';
import { copyFiles, exclusionEnv, filesToCopy, removeCopies, type StepPlace } from './copy.js';
import type { LegCheck } from '../ports.js';
import type { StepName } from './policy.js';
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
    /** Puts the leg's network fence up (DISPATCH.md §9): after setup, before the agent; its variables for the rest. */
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
  const { log } = leg;
  let ports = null as PortBlock | null;
  let copied: string[] = [];
  let excluded = { env: {} as Record<string, string>, dispose() {} };
  // The agent's environment (never svc's credentials), less the prompt file, which is the agent's.
  const base = (extra: Record<string, string>) => {
    const env = agentEnv(ctx.opts, { SVC_CARD_KEY: key, SVC_RUN_ID: ctx.runId, SVC_PROMPT_FILE: '', SVC_WORKDIR: place.cwd, SVC_BRANCH: leg.branch });
    delete (env as Record<string, string | undefined>).SVC_PROMPT_FILE;
    return place.env({ ...env, ...extra });
  };
  let stepEnv: Record<string, string> = {};
  let wrap: FenceHooks['wrap'];
  const step = async (name: StepName, command: string) => {
    log.note(`${name}: ${command}`);
    const out = stepPipe(log);
    const r = await runStep({
      command,
      cwd: place.cwd,
      env: stepEnv,
      user: place.user,
      timeoutMs: wf.timeouts[name],
      killGraceMs: ctx.opts.timeouts.killGraceMs,
      // Teardown runs after an interruption too: it is what stops the leg's servers.
      ...(name === 'teardown' ? {} : { signal: ctx.signal }),
      onOutput: (c) => out.push(c),
      ...(wrap && name !== 'setup' ? { wrap } : {}),
      ...(ctx.onAgentGroup ? { onGroup: (e: 'start' | 'end', pgid: number) => ctx.onAgentGroup!(key, e, pgid) } : {}),
    });
    out.end();
    const outcome = stepOutcome(r, formatDuration(wf.timeouts[name]));
    log.note(`${name}: ${outcome} (${formatDuration(r.durationMs)})`);
    return { ok: r.exitCode === 0 && !r.stopped && !r.error, outcome, exitCode: r.exitCode, tail: out.tail, interrupted: r.stopped === 'interrupted' };
  };
  let check: LegCheck = { status: 'none', command: null, exitCode: null, output: null };
  let attempts = 0;
  const spent: Pick<LegResult, 'costUsd' | 'tokensIn' | 'tokensOut'> = {};
  const add = (a: number | undefined, b: number | undefined) => (a === undefined ? b : b === undefined ? a : a + b);

  const body = async (): Promise<LegResult> => {
    if (wf.ports) {
      ports = await reservePorts(wf.ports, { stateDir: ctx.deps.stateDir });
      log.note(`ports: SVC_PORT=${ports.first}${ports.count > 1 ? ` (${ports.first}-${ports.first + ports.count - 1})` : ''}`);
    }
    if (wf.copy.length) {
      const { root, files } = await filesToCopy(repoOf(ctx, key), wf.copy);
      const done = await copyFiles(place, root, files);
      copied = done.copied;
      for (const line of done.lines) log.note(line);
      if (!files.length) log.note(`copy: no untracked file of ${root} matches ${wf.copy.join(' ')}`);
      excluded = exclusionEnv(copied, ctx.opts.env);
    }
    let extra: Record<string, string> = { ...(ports ? { SVC_PORT: String(ports.first), SVC_PORT_COUNT: String(ports.count) } : {}), ...excluded.env };
    stepEnv = base(extra);
    // Nothing of the leg runs yet: whatever holds a port of its block now is a stranger.
    const squatted = await ports?.inUse(null);
    if (squatted) return failed(squatted);
    for (const command of wf.setup) {
      const s = await step('setup', command);
      if (!s.ok) return failed(s.interrupted ? 'interrupted' : `setup failed (${s.outcome})`);
    }
    if (place.fence) {
      // Setup ran open; nothing it started runs on inside the fence.
      await place.quiesce?.();
      const fenced = await place.fence(ports ? { first: ports.first, count: ports.count } : null).catch((e: Error) => fenceFailed(ctx, e));
      if (!('env' in fenced)) return fenced;
      extra = fenced.env(extra);
      stepEnv = base(extra);
      wrap = fenced.wrap;
    }
    // The agent sees the same ports and excludes; --max-cost hears the leg's spend over all attempts.
    const agentCtx: LegContext = {
      ...ctx,
      workflowEnv: extra,
      ...(wrap ? { fenceWrap: wrap } : {}),
      ...(ctx.onSpend ? { onSpend: (k: string, cost: number) => ctx.onSpend!(k, (spent.costUsd ?? 0) + cost) } : {}),
    };
    let prompt = leg.prompt;
    const verify = ctx.mode === 'review' ? null : wf.verify;
    for (;;) {
      attempts++;
      const r = await leg.attempt(agentCtx, prompt);
      spent.costUsd = add(spent.costUsd, r.costUsd);
      spent.tokensIn = add(spent.tokensIn, r.tokensIn);
      spent.tokensOut = add(spent.tokensOut, r.tokensOut);
      if (r.outcome !== 'succeeded' || !verify) return r;
      // The check decides on the work as the agent left it: nothing of the uid runs on past this,
      // and a port of the leg held by another uid, before or after its check, could have answered it.
      await place.quiesce?.();
      const checked = (await place.head?.()) ?? null;
      const before = await strangerOnPorts(ports, place);
      if (before) return { ...r, outcome: 'failed', reason: before };
      const v = await step('verify', verify);
      const after = await strangerOnPorts(ports, place);
      check = { status: v.ok && !after ? 'passed' : 'failed', command: verify, exitCode: v.exitCode, output: after ?? (v.ok ? null : v.tail()) };
      if (after) return { ...r, outcome: 'failed', reason: after };
      if (v.ok) return checked ? { ...r, checkedHead: checked } : r;
      if (v.interrupted) return { ...r, outcome: 'failed', reason: 'interrupted' };
      if (attempts > wf.verifyAttempts || ctx.signal.aborted) return { ...r, outcome: 'failed', reason: `verify failed (${v.outcome})` };
      log.note(`attempt ${attempts + 1} of ${wf.verifyAttempts + 1}: the agent again, with the check's output`);
      ctx.stream.push({ workItemKey: key, disposition: 'running', sessionBranch: leg.branch });
      prompt = checkFailedPrompt(leg.prompt, {
        command: verify,
        outcome: v.outcome,
        output: check.output ?? '',
        attempt: attempts + 1,
        of: wf.verifyAttempts + 1,
      });
      await place.writePrompt?.(prompt);
    }
  };

  let result: LegResult;
  try {
    result = await body();
  } catch (error) {
    result = failed(`workflow: ${reasonLine(error instanceof Error ? error.message : String(error), ctx.opts)}`);
  }
  // Teardown whatever the outcome; its failure is logged, never the leg's.
  for (const command of wf.teardown) await step('teardown', command);
  await removeCopies(place, copied).catch((e: Error) => log.note(`could not remove the copied files: ${e.message.split('\n')[0]}`));
  excluded.dispose();
  ports?.release();
  const spend = Object.fromEntries(Object.entries(spent).filter(([, v]) => v !== undefined));
  return { ...result, ...spend, durationMs: Date.now() - started, check, attempts };
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
