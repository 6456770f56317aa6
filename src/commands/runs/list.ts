// `svc runs list`: the runs of this machine's state folder, newest first; no request.
import { listLocalRuns, resolveStateDir } from '../../dispatch/index.js';
import type { Context } from '../context.js';

export type RunsListOptions = Record<string, never>;

export async function runRunsList(_opts: RunsListOptions, ctx: Context): Promise<void> {
  const rows = await listLocalRuns(resolveStateDir(ctx.env));
  if (ctx.out.json) return ctx.out.document(rows);
  if (!rows.length) return ctx.out.info('No runs recorded on this machine.');
  ctx.out.table(
    ['RUN', 'COMMAND', 'CARDS', 'STATUS', 'STARTED', 'WHERE'],
    rows.map((r) => [
      r.id,
      r.command,
      // Narrow enough for an 80-column terminal: what did not land is named only when there is some.
      [`${r.cards.implemented}/${r.cards.total} ok`, r.cards.failed ? `${r.cards.failed} failed` : '', r.cards.skipped ? `${r.cards.skipped} skipped` : '']
        .filter(Boolean)
        .join(', '),
      r.stopReason ? `${r.status} (${r.stopReason})` : r.status,
      // Minutes in UTC (--json keeps the full time).
      r.started.replace('T', ' ').slice(0, 16),
      r.where,
    ]),
  );
}
