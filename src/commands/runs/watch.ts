// `svc runs watch ID`: polls the run (getDispatchRun) and prints a stamped line when it changes, until it
// closes; a failed run exits 1.
import { setTimeout as sleep } from 'node:timers/promises';
import { parseDuration } from '../../dispatch/index.js';
import { connect } from '../connect.js';
import type { Context } from '../context.js';
import { EXIT } from '../exit-codes.js';
import { runLines } from './run-lines.js';
import type { RunsWatchFlags } from './flags.js';

/** The flags of `svc runs watch` (and the run id), as its table in register.ts declares them. */
export type RunsWatchOptions = RunsWatchFlags & { id: string };

export async function runRunsWatch(opts: RunsWatchOptions, ctx: Context): Promise<void> {
  const every = parseDuration(opts.interval, '--interval');
  const api = connect(ctx);
  let last = '';
  for (;;) {
    const run = await api.getDispatchRun(opts.id);
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
