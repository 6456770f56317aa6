// `svc runs list`: the runs of this machine's state folder, newest first; no request.
import { listLocalRuns } from '../../dispatch/local-runs.js';
import { resolveStateDir } from '../../dispatch/state.js';
import type { Context } from '../context.js';

export type RunsListOptions = Record<string, never>;

export async function runRunsList(_opts: RunsListOptions, ctx: Context): Promise<void> {
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
