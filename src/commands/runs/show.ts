// `svc runs show ID`: the run as the service recorded it (getDispatchRun).
import { connect } from '../connect.js';
import type { Context } from '../context.js';
import { runLines } from './run-lines.js';

export interface RunsShowOptions {
  id: string;
}

export async function runRunsShow(opts: RunsShowOptions, ctx: Context): Promise<void> {
  const run = await connect(ctx).getDispatchRun(opts.id);
  if (ctx.out.json) return ctx.out.document(run);
  const { head, rows } = runLines(run);
  for (const line of head) ctx.out.data(line);
  ctx.out.table(['CARD', 'DISPOSITION', 'EXIT', 'BRANCH', 'SKIP REASON'], rows);
}
