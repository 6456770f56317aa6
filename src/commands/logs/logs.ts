// `svc logs RUN [KEY]`: the local per-leg logs of a run, in run order (the close-out last), each
// under a `── KEY ──` line on stdout (so `svc logs RUN > file` keeps them apart; `--no-headers`
// leaves them out). A leg whose agent streams JSON events (the claude, codex, gemini and opencode
// presets, `--agent-format`) is shown as readable lines (src/dispatch/agent/streams/render.ts);
// `--raw` prints every log as recorded. `--follow` goes on printing what the legs of a live run
// write until the run ends. A reader that goes away (`| head`) ends the command quietly, exit 0,
// as git's pager does.
import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import type { StreamRenderer } from '../../dispatch/agent/streams/index.js';
import type { StreamFormat } from '../../dispatch/agent/types.js';
import { isRunLive, loadStreamRenderers, logPath, logsInRunOrder, readRunRecord, resolveStateDir, runPaths, streamOf } from '../../dispatch/index.js';
import type { RunRecord } from '../../dispatch/state/folder.js';
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

/** One leg's log as it is printed: how far it was read, and its renderer (none with --raw). */
interface LegLog {
  file: string;
  read: number;
  renderer: StreamRenderer | null;
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
  const record = readRunRecord(stateDir, runId);
  const { createStreamRenderer } = await loadStreamRenderers();
  const legs = new Map<string, LegLog>();
  const legOf = (k: string): LegLog => {
    let leg = legs.get(k);
    if (!leg) legs.set(k, (leg = { file: logPath(paths, k), read: 0, renderer: opts.raw ? null : createStreamRenderer(legFormat(record, k)) }));
    return leg;
  };
  // --json: one document holding each leg's log (readable, or with --raw as recorded).
  if (ctx.out.json) return ctx.out.document({ runId, legs: keys.map((k) => ({ key: k, log: wholeLog(legOf(k)) })) });
  const headers = opts.headers !== false && !key;
  // On a terminal the log's control characters are shown, not obeyed; a pipe gets the bytes.
  const write = async (from: Readable) => {
    if (ctx.out.stdoutIsTTY) await pipeline(from, visibleStream(), ctx.stdout, { end: false });
    else await pipeline(from, ctx.stdout, { end: false });
  };
  const header = (k: string) => write(Readable.from([Buffer.from(`── ${k} ──\n`)]));
  const follow = opts.follow === true;
  for (const k of keys) {
    if (headers) await header(k);
    await write(Readable.from(readOn(legOf(k), !follow)));
  }
  if (!follow) return;
  // What the legs write from now on, as they write it; a leg that starts later joins in.
  let last = keys[keys.length - 1];
  for (let live = isRunLive(stateDir, runId); ; live = isRunLive(stateDir, runId)) {
    for (const k of key ? [key] : await logsInRunOrder(stateDir, runId)) {
      const leg = legOf(k);
      if (!existsSync(leg.file)) continue;
      // One more pass after the run ended: what its legs wrote last is printed, a cut line too.
      const pieces = readOn(leg, !live);
      const first = await pieces.next();
      if (first.done) continue;
      if (headers && last !== k) await header(k);
      last = k;
      await write(Readable.from(prepend(first.value, pieces)));
    }
    if (!live) return;
    await sleep(FOLLOW_EVERY_MS);
  }
}

/**
 * What `leg` holds beyond what was printed, readable or as recorded, piece by piece as it is read.
 * A line still being written waits for its end while the run goes on; `atEnd` (nothing more will
 * be read) prints it too.
 */
async function* readOn(leg: LegLog, atEnd: boolean): AsyncGenerator<Buffer> {
  const size = statSync(leg.file).size;
  if (size > leg.read) {
    const from = leg.read;
    leg.read = size;
    for await (const chunk of createReadStream(leg.file, { start: from, end: size - 1 }) as AsyncIterable<Buffer>) {
      const piece = leg.renderer ? Buffer.from(leg.renderer.push(chunk)) : chunk;
      if (piece.length) yield piece;
    }
  }
  const rest = atEnd && leg.renderer ? leg.renderer.end() : '';
  if (rest) yield Buffer.from(rest);
}

async function* prepend(first: Buffer, rest: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  yield first;
  yield* rest;
}

function wholeLog(leg: LegLog): string {
  const bytes = readFileSync(leg.file);
  return leg.renderer ? leg.renderer.push(bytes) + leg.renderer.end() : bytes.toString('utf8');
}

/**
 * The stream format of the agent that wrote a leg's log, from the run's run.json: the run's agent,
 * or for a best-of-N attempt's `<KEY>-attempt-<n>` the n-th `--agent`, cycling (as the run chose).
 */
function legFormat(record: RunRecord | null, stem: string): StreamFormat | null {
  // readRunRecord has read the options back to the shape written (an unreadable agent is dropped).
  const options = record?.options ?? {};
  const attempt = /-attempt-(\d+)$/.exec(stem);
  const list = options.agents?.length ? options.agents : [options.agent];
  const choice = attempt ? list[(Number(attempt[1]) - 1) % list.length] : options.agent;
  return choice ? streamOf(choice) : null;
}
