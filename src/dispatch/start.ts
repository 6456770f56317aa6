// The engine's three ways in, one per mode of a dispatch command: a run selected and opened here
// (`startDispatch`: the eight commands, the demo), a run opened here for a hosted runner
// (`openHostedRun`: `--hosted`), and a run a hosted runner was handed (`startHostedRun`: inside
// the runner's container, docs/hosted.md). Each takes the typed options and what only the caller
// has (the client, the state folder, where progress goes, the abort signal); the engine's own
// parts come from deps.ts.
import type { ApiClient } from '../api/client.js';
import type { DispatchRunOpened } from '../contract/types.js';
import { pushToOrigin } from './git/delivery.js';
import type { HostedExecution } from './hosted/execution.js';
import { dispatchDeps } from './lifecycle/deps.js';
import { runDispatch } from './lifecycle/dispatch.js';
import { runExistingRun } from './lifecycle/existing-run.js';
import type { DispatchOptions, RunSummary } from './lifecycle/types.js';
import type { ProgressSink } from './ports.js';
import { createGitHubWriter } from './pr/github.js';
import { createRedactor } from './redact.js';
import { selectCards } from './select/index.js';
import { readRunRecord } from './state/folder.js';
import { noteHostedOpen } from './state/runs.js';
import { dispatchServiceOf } from './wire/service.js';

/** What a command hands the engine besides its options. */
export interface EngineContext {
  /** Must NOT be aborted by `signal`: after an interruption the engine still flushes and closes. */
  client: ApiClient;
  stateDir: string;
  output: ProgressSink;
  /** Aborted on the first SIGINT/SIGTERM (signals.ts). */
  signal: AbortSignal;
}

/**
 * A run selected and opened here, executed and closed (`auto`: one run per round). Implemented
 * branches are pushed to origin with the user's git (`push`); pull requests go through the user's
 * gh (`pr`), its output redacted of the run's secrets.
 */
export async function startDispatch(opts: DispatchOptions, ctx: EngineContext): Promise<RunSummary> {
  // gh's writer (and execa under it) is loaded only by a run that opens pull requests: every other
  // run, a fleet worker's above all, starts without compiling it.
  const gh = opts.pr ? await import('./pr/gh.js') : null;
  return runDispatch(
    opts,
    dispatchDeps({
      service: dispatchServiceOf(ctx.client),
      stateDir: ctx.stateDir,
      output: ctx.output,
      signal: ctx.signal,
      pushBranch: pushToOrigin,
      ...(gh ? { pullRequests: gh.createGhWriter({ env: opts.env, redact: createRedactor(opts.secrets) }) } : {}),
    }),
  );
}

/** The run opened for a hosted runner, or why none was: an empty card set is no failure (exit 0). */
export type HostedOpen = { opened: DispatchRunOpened } | { opened: null; note: string };

/**
 * `--hosted`: the card set selected exactly as a local run would, then opened with `origin:
 * hosted` for a runner to execute; nothing runs here. What travels is what the open's body holds
 * (agent, model, scope, cards). The run is noted in the state folder so `svc runs list` and
 * `svc runs cancel` find it.
 */
export async function openHostedRun(opts: DispatchOptions, ctx: Pick<EngineContext, 'client' | 'stateDir'>): Promise<HostedOpen> {
  const selection = await selectCards(
    {
      command: opts.command,
      projectKey: opts.projectKey,
      keys: opts.keys,
      ...(opts.lanes ? { lanes: opts.lanes } : {}),
      ...(opts.maxCards ? { max: opts.maxCards } : {}),
    },
    {
      service: dispatchServiceOf(ctx.client),
      localRun: (runId) => {
        const r = readRunRecord(ctx.stateDir, runId);
        return r ? { originalCommand: r.originalCommand, scopeKey: r.scopeKey } : null;
      },
    },
  );
  if (selection.empty) return { opened: null, note: selection.note };
  const agentName = opts.agent.agent ?? (opts.agent.agentCmd ? 'custom' : undefined);
  const opened = await ctx.client.openDispatchRun({
    projectKey: opts.projectKey,
    command: selection.command,
    origin: 'hosted',
    ...(selection.scopeKey ? { scopeKey: selection.scopeKey } : {}),
    ...(agentName ? { agent: agentName } : {}),
    ...(opts.agent.model ? { model: opts.agent.model } : {}),
    ...(opts.idempotencyKey ? { idempotencyKey: opts.idempotencyKey } : {}),
    cards: selection.cards.map((c) => ({ workItemKey: c.key, ...(c.skipReason ? { skipReason: c.skipReason } : {}) })),
  });
  noteHostedOpen(ctx.stateDir, opened.run);
  return { opened };
}

/** How a hosted run writes pull requests: GitHub's REST API with the run's installation token. */
export interface HostedPullRequests {
  apiUrl: string | null;
  maxWaitMs: number;
  /** A rate-limit wait, one line. */
  onWait(line: string): void;
}

/**
 * A run a hosted runner was handed, executed through its own credential: its cards are the run's
 * legs still to run, each in the clone of its first target repository (the run's only clone for
 * a close-out, which names none); branches are pushed through the credential broker.
 */
export function startHostedRun(
  opts: DispatchOptions,
  h: HostedExecution,
  ctx: Pick<EngineContext, 'stateDir' | 'output' | 'signal'> & { pullRequests: HostedPullRequests },
): Promise<RunSummary> {
  const only = h.repositories.length === 1 ? h.repositories[0]!.dir : null;
  const pr = ctx.pullRequests;
  return runExistingRun(
    opts,
    dispatchDeps({
      service: dispatchServiceOf(h.api),
      stateDir: ctx.stateDir,
      output: ctx.output,
      signal: ctx.signal,
      repoFor: (key) => h.repoDirFor(key) ?? only,
      pushBranch: (repo, branch) => h.pushBranch(repo, branch),
      // The broker is asked for the token on every call: it is minted again before it expires.
      ...(opts.pr
        ? {
            pullRequests: createGitHubWriter({
              apiUrl: pr.apiUrl,
              tokenFor: async (repository) => (await h.broker.credentialFor(repository)).token,
              maxWaitMs: pr.maxWaitMs,
              redact: (text) => createRedactor([...opts.secrets, ...h.secrets()])(text),
              onWait: pr.onWait,
            }),
          }
        : {}),
    }),
    { run: h.run.run, items: h.cards.map((c) => c.item) },
  );
}
