// `svc designs`: listDesigns. The contract leaves the row shape open, so the table reads the fields it
// shows defensively (a missing one prints `-`); --json passes the rows through untouched.
import type { DesignRow } from '../../api/client.js';
import { paginate } from '../../api/paginate.js';
import { connect } from '../connect.js';
import type { Context } from '../context.js';
import { requireProject } from '../settings.js';
import { wholeNumber } from '../flag-values.js';
import type { DesignsFlags } from './flags.js';

/** The flags of `svc designs`, as its table in register.ts declares them. */
export type DesignsListOptions = DesignsFlags;

export async function runDesignsList(opts: DesignsListOptions, ctx: Context): Promise<void> {
  const project = requireProject(ctx, opts.project);
  const max = wholeNumber(opts.limit, '--limit');
  const api = connect(ctx);
  const query = { ...(opts.pathPrefix ? { pathPrefix: opts.pathPrefix } : {}), ...(opts.query ? { query: opts.query } : {}) };
  const rows: DesignRow[] = [];
  for await (const row of paginate((cursor) => api.listDesigns(project, { ...query, cursor, limit: 100 }), max ? { maxItems: max } : {})) rows.push(row);
  if (ctx.out.json) return ctx.out.document(rows);
  ctx.out.table(['ID', 'ITEM', 'APPROVED', 'FILES', 'TITLE'], rows.map(designRow));
  if (rows.length === 0) ctx.out.info(`no approved designs of ${project}${opts.pathPrefix || opts.query ? ' match --path-prefix/--query' : ''}`);
}

function designRow(row: DesignRow): string[] {
  const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : '-');
  const assets = Array.isArray(row.assets) ? (row.assets as Record<string, unknown>[]) : [];
  const paths = assets.map((a) => a?.sourcePath).filter((p): p is string => typeof p === 'string');
  const files = paths.length === 0 ? String(assets.length) : paths.length === 1 ? paths[0]! : `${paths[0]} (+${paths.length - 1})`;
  return [text(row.id), text(row.workItemKey), text(row.approvedAt).slice(0, 10), files, text(row.title)];
}
