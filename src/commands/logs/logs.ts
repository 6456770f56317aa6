// `svc logs RUN [KEY]`: the local per-leg logs of a run, in run order (the close-out last).
import { createReadStream, existsSync, readFileSync } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { logsInRunOrder } from '../../dispatch/state/runs.js';
import { logPath, resolveStateDir, runPaths } from '../../dispatch/state/folder.js';
import type { Context } from '../context.js';
import { EXIT } from '../exit-codes.js';
import { visibleStream } from '../../ui/visible-stream.js';

export interface LogsOptions {
  runId: string;
  key?: string;
}

export async function runLogs(opts: LogsOptions, ctx: Context): Promise<void> {
  const { runId, key } = opts;
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
    // On a terminal the log's control characters are shown, not obeyed; a pipe gets the bytes.
    if (ctx.out.stdoutIsTTY) await pipeline(createReadStream(file), visibleStream(), ctx.stdout, { end: false });
    else await pipeline(createReadStream(file), ctx.stdout, { end: false });
  }
}
