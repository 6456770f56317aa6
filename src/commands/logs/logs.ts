// `svc logs RUN [KEY]`: the local per-leg logs of a run, in run order (the close-out last), each
// under a `── KEY ──` line on stdout (so `svc logs RUN > file` keeps them apart; `--no-headers`
// leaves them out). `--follow` goes on printing what the legs of a live run write until the run
// ends. A reader that goes away (`| head`) ends the command quietly, exit 0, as git's pager does.
import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { isRunLive, logPath, logsInRunOrder, resolveStateDir, runPaths } from '../../dispatch/index.js';
import type { Context } from '../context.js';
import { EXIT } from '../exit-codes.js';
import type { LogsFlags } from './flags.js';
import { visibleStream } from '../../ui/visible-stream.js';

export type LogsOptions = LogsFlags & { runId: string; key?: string };

/** How often `--follow` looks for what the legs wrote since. */
const FOLLOW_EVERY_MS = 250;

const gone = (error: unknown) => (error as NodeJS.ErrnoException).code === 'EPIPE';

export async function runLogs(opts: LogsOptions, ctx: Context): Promise<void> {
  try {
    await printLogs(opts, ctx);
  } catch (error) {
    if (!gone(error)) throw error;
  }
}

async function printLogs(opts: LogsOptions, ctx: Context): Promise<void> {
  const { runId, key } = opts;
  const stateDir = resolveStateDir(ctx.env);
  const paths = runPaths(stateDir, runId);
  if (!existsSync(paths.logs)) {
    throw Object.assign(new Error(`no local logs for run ${runId} on this machine (looked in ${paths.logs})`), { exitCode: EXIT.notFound });
  }
  // In run order: the legs as the run took its cards, the close-out last.
  const keys = key ? [key] : await logsInRunOrder(stateDir, runId);
  for (const k of keys) {
    if (!existsSync(logPath(paths, k))) throw Object.assign(new Error(`no log for ${k} in run ${runId}`), { exitCode: EXIT.notFound });
  }
  // --json: one document holding each leg's log, instead of the raw text a pipe gets.
  if (ctx.out.json) return ctx.out.document({ runId, legs: keys.map((k) => ({ key: k, log: readFileSync(logPath(paths, k), 'utf8') })) });
  const headers = opts.headers !== false && !key;
  // On a terminal the log's control characters are shown, not obeyed; a pipe gets the bytes.
  const write = async (from: Readable) => {
    if (ctx.out.stdoutIsTTY) await pipeline(from, visibleStream(), ctx.stdout, { end: false });
    else await pipeline(from, ctx.stdout, { end: false });
  };
  const header = (k: string) => write(Readable.from([Buffer.from(`── ${k} ──\n`)]));
  const printed = new Map<string, number>();
  for (const k of keys) {
    const file = logPath(paths, k);
    if (headers) await header(k);
    const size = sizeOf(file);
    if (size > 0) await write(createReadStream(file, { end: size - 1 }));
    printed.set(k, size);
  }
  if (!opts.follow) return;
  // What the legs write from now on, as they write it; a leg that starts later joins in.
  let last = keys[keys.length - 1];
  for (let live = isRunLive(stateDir, runId); ; live = isRunLive(stateDir, runId)) {
    for (const k of key ? [key] : await logsInRunOrder(stateDir, runId)) {
      const file = logPath(paths, k);
      const from = printed.get(k) ?? 0;
      const size = existsSync(file) ? sizeOf(file) : 0;
      if (size <= from) continue;
      if (headers && last !== k) await header(k);
      last = k;
      await write(createReadStream(file, { start: from, end: size - 1 }));
      printed.set(k, size);
    }
    // One more pass after the run ended: what its legs wrote last is printed too.
    if (!live) return;
    await sleep(FOLLOW_EVERY_MS);
  }
}

function sizeOf(file: string): number {
  return statSync(file).size;
}
