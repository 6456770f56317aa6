// runs show/watch read the record on the service; logs reads the local per-leg logs; recover and
// worktrees prune hand over to the engine.
import { createReadStream, existsSync, readFileSync } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DispatchRun } from '../../contract/types.js';
import { parseDuration } from '../../dispatch/duration.js';
import { cancelRun, listLocalRuns, logsInRunOrder } from '../../dispatch/local-runs.js';
import { logPath, resolveStateDir, runPaths } from '../../dispatch/state.js';
import { connect } from '../connect.js';
import type { Context } from '../context.js';
import { EXIT } from '../exit-codes.js';

export function runLines(run: DispatchRun): { head: string[]; rows: string[][] } {
  const head = [`run ${run.id} · ${run.command} · ${run.status}${run.stopReason ? ` (${run.stopReason})` : ''}`, `started ${run.startedAt}${run.endedAt ? ` · ended ${run.endedAt}` : ''} · seq ${run.seq}${run.agent ? ` · agent ${run.agent}` : ''}`];
  const rows = run.cards.map((c) => [c.workItemKey, c.disposition, c.exitCode === null ? '' : String(c.exitCode), c.sessionBranch ?? '', c.skipReason ?? '']);
  return { head, rows };
}

export async function runsShow(ctx: Context, id: string): Promise<void> {
  const run = await connect(ctx).getDispatchRun(id);
  if (ctx.out.json) return ctx.out.document(run);
  const { head, rows } = runLines(run);
  for (const line of head) ctx.out.data(line);
  ctx.out.table(['CARD', 'DISPOSITION', 'EXIT', 'BRANCH', 'SKIP REASON'], rows);
}

export async function runsWatch(ctx: Context, id: string, opts: { interval: string }): Promise<void> {
  const every = parseDuration(opts.interval, '--interval');
  const api = connect(ctx);
  let last = '';
  for (;;) {
    const run = await api.getDispatchRun(id);
    const digest = JSON.stringify([run.status, run.seq, run.cards.map((c) => c.disposition)]);
    if (digest !== last && !ctx.out.json) {
      last = digest;
      const { head, rows } = runLines(run);
      ctx.out.info(`${new Date().toISOString()} ${head[0]}`);
      for (const r of rows) ctx.out.info(`  ${r[0]} ${r[1]}${r[2] ? ` exit ${r[2]}` : ''}`);
    }
    if (run.status !== 'running') {
      if (ctx.out.json) ctx.out.document(run);
      if (run.status === 'failed') ctx.exitCode = EXIT.failed;
      return;
    }
    await sleep(every, undefined, { signal: ctx.interrupts.signal }).catch(() => undefined);
    if (ctx.interrupts.signal.aborted) return;
  }
}

export async function logs(ctx: Context, runId: string, key: string | undefined): Promise<void> {
  const stateDir = resolveStateDir(ctx.env);
  const paths = runPaths(stateDir, runId);
  if (!existsSync(paths.logs)) {
    throw Object.assign(new Error(`no local logs for run ${runId} on this machine (looked in ${paths.logs})`), { exitCode: EXIT.notFound });
  }
  // In run order: the legs as the run took its cards, the close-out last.
  const keys = key ? [key] : logsInRunOrder(stateDir, runId);
  for (const k of keys) {
    if (!existsSync(logPath(paths, k))) throw Object.assign(new Error(`no log for ${k} in run ${runId}`), { exitCode: EXIT.notFound });
  }
  // --json: one document holding each leg's log, instead of the raw text a pipe gets.
  if (ctx.out.json) return ctx.out.document({ runId, legs: keys.map((k) => ({ key: k, log: readFileSync(logPath(paths, k), 'utf8') })) });
  for (const k of keys) {
    const file = logPath(paths, k);
    if (!key) ctx.out.info(`── ${k} ──`);
    await pipeline(createReadStream(file), ctx.stdout, { end: false });
  }
}

/** `svc runs list`: the runs of this machine's state folder, newest first; no request. */
export async function runsList(ctx: Context): Promise<void> {
  const rows = listLocalRuns(resolveStateDir(ctx.env));
  if (ctx.out.json) return ctx.out.document(rows);
  if (!rows.length) return ctx.out.info('No runs recorded on this machine.');
  ctx.out.table(
    ['RUN', 'COMMAND', 'CARDS', 'STATUS', 'STARTED', 'WHERE'],
    rows.map((r) => [
      r.id,
      r.command,
      `${r.cards.total} (${r.cards.implemented} ok, ${r.cards.failed} failed, ${r.cards.skipped} skipped)`,
      r.stopReason ? `${r.status} (${r.stopReason})` : r.status,
      r.started,
      r.where,
    ]),
  );
}

/** `svc runs cancel RUN`: closes a run nobody is running (interrupted, cancelled). */
export async function runsCancel(ctx: Context, runId: string): Promise<void> {
  const { dispatchServiceOf } = await import('../../dispatch/api-service.js');
  const api = connect(ctx, { interruptible: false });
  try {
    const result = await cancelRun(dispatchServiceOf(api), resolveStateDir(ctx.env), runId);
    if (ctx.out.json) return ctx.out.document({ runId, ...result });
    ctx.out.info(result.action === 'cancelled' ? `Cancelled run ${runId} (${result.stopReason}, ${result.status}).` : `Run ${runId} is already closed (${result.status}${result.stopReason ? `, ${result.stopReason}` : ''}).`);
  } finally {
    await api.close();
  }
}

export async function runsRecover(ctx: Context, runId?: string): Promise<void> {
  const { recoverRuns } = await import('../../dispatch/recover.js');
  const { dispatchServiceOf } = await import('../../dispatch/api-service.js');
  const { resolveBaseUrl } = await import('../settings.js');
  const current = resolveBaseUrl(ctx);
  const clients: { close(): Promise<void> }[] = [];
  try {
    const results = await recoverRuns(
      {
        stateDir: resolveStateDir(ctx.env),
        // The token belongs to the configured service: a run recorded against another one is left
        // alone rather than sent a credential it was never meant to see.
        serviceFor: (record) => {
          if (record.baseUrl.replace(/\/+$/, '') !== current) return null;
          const api = connect(ctx, { interruptible: false });
          clients.push(api);
          return dispatchServiceOf(api);
        },
        output: { info: (m) => ctx.out.info(m), warn: (m) => ctx.out.warn(m) },
      },
      runId,
    );
    if (ctx.out.json) return ctx.out.document(results);
    if (!results.length) return ctx.out.info('Nothing to recover: every local run is closed.');
    ctx.out.table(['RUN', 'ACTION', 'SENT', 'STOP', 'STATUS', 'DETAIL'], results.map((r) => [r.runId, r.action, String(r.sent), r.stopReason ?? '', r.status ?? '', r.detail ?? '']));
    if (results.some((r) => r.action === 'failed')) ctx.exitCode = EXIT.failed;
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
}

export async function worktreesPrune(ctx: Context, opts: { repo?: string }): Promise<void> {
  const { pruneWorktrees } = await import('../../dispatch/worktree.js');
  const { liveRuns } = await import('../../dispatch/run-lock.js');
  const { resolve } = await import('node:path');
  // A worktree of a run still going on this machine is its agent's workplace, clean or not.
  const inUse = new Map<string, string>();
  for (const live of liveRuns(resolveStateDir(ctx.env))) {
    for (const key of live.keys) inUse.set(key, `in use by live run ${live.runId} (process ${live.owner.pid})`);
  }
  const result = await pruneWorktrees({ repo: resolve(ctx.cwd, opts.repo ?? ctx.env.SVC_REPO ?? '.'), inUse });
  if (ctx.out.json) return ctx.out.document(result);
  for (const r of result.removed) ctx.out.info(`removed ${r.key} (${r.path})`);
  for (const k of result.kept) ctx.out.info(`kept ${k.key}: ${k.reason}`);
  if (!result.removed.length && !result.kept.length) ctx.out.info('No svc worktrees here.');
}
