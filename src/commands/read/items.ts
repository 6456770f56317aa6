// items list/show/count/create/edit and the ready lanes.
import { ApiError } from '../../api/errors.js';
import { paginate } from '../../api/paginate.js';
import { KEY_PATTERN, type WorkItemDetail, type WorkItemUpdate, type WorkItemCreate, type WorkItemSummary } from '../../contract/types.js';
import { connect } from '../connect.js';
import type { Context } from '../context.js';
import { EXIT, UsageError } from '../exit-codes.js';
import { requireProject } from '../settings.js';
import { wholeNumber } from '../flag-values.js';

function checkKey(key: string): string {
  if (!KEY_PATTERN.test(key)) throw new UsageError(`'${key}' is not a work item key (like PROJ-12)`);
  return key;
}

const summaryRow = (i: WorkItemSummary) => [i.key, i.kind, i.status, i.priority, i.title];

export async function itemsList(ctx: Context, opts: { project?: string; filter?: string; limit?: string }): Promise<void> {
  const project = requireProject(ctx, opts.project);
  const max = wholeNumber(opts.limit, '--limit');
  const api = connect(ctx);
  const rows: WorkItemSummary[] = [];
  const pages = paginate((cursor) => api.listWorkItems(project, { cursor, limit: 100, ...(opts.filter ? { filter: opts.filter } : {}) }), max ? { maxItems: max } : {});
  for await (const item of pages) rows.push(item);
  if (ctx.out.json) return ctx.out.document(rows);
  ctx.out.table(['KEY', 'KIND', 'STATUS', 'PRIORITY', 'TITLE'], rows.map(summaryRow));
}

export async function itemsCount(ctx: Context, opts: { project?: string; filter?: string }): Promise<void> {
  const project = requireProject(ctx, opts.project);
  const { count } = await connect(ctx).countWorkItems(project, opts.filter ? { filter: opts.filter } : {});
  if (ctx.out.json) return ctx.out.document({ count });
  ctx.out.data(String(count));
}

export async function itemsShow(ctx: Context, key: string): Promise<void> {
  const { item } = await connect(ctx).getWorkItem(checkKey(key));
  if (ctx.out.json) return ctx.out.document(item);
  for (const line of describe(item)) ctx.out.data(line);
}

function describe(item: WorkItemDetail): string[] {
  const lines = [`${item.key}  ${item.title}`, `${item.kind}${item.type ? `/${item.type}` : ''} · ${item.status} · ${item.priority}${item.assigneeId ? ` · ${item.assigneeId}` : ''}`];
  if (item.ancestorKeys.length) lines.push(`under ${item.ancestorKeys.join(' › ')}`);
  lines.push(`ready: ${item.readiness.ready ? 'yes' : `no${item.readiness.openBlockers.length ? ` (blocked by ${item.readiness.openBlockers.map((b) => b.key).join(', ')})` : ''}${item.readiness.blockedByAncestorKey ? ` (ancestor ${item.readiness.blockedByAncestorKey} is blocked)` : ''}`}`);
  if (item.children.length) lines.push(`children: ${item.children.map((c) => `${c.key} [${c.status}]`).join(', ')}`);
  if (item.labels.length) lines.push(`labels: ${item.labels.map((l) => l.name).join(', ')}`);
  for (const d of item.deliveries) lines.push(`delivery: ${d.repo}#${d.number} ${d.state}${d.ci ? ` ci ${d.ci}` : ''} ${d.url}`);
  if (item.descriptionMd) lines.push('', item.descriptionMd);
  return lines;
}

export async function itemsCreate(
  ctx: Context,
  opts: { project?: string; kind: string; title: string; parent?: string; description?: string; priority?: string; type?: string },
): Promise<void> {
  const project = requireProject(ctx, opts.project);
  const body = {
    kind: opts.kind,
    title: opts.title,
    ...(opts.parent ? { parentKey: checkKey(opts.parent) } : {}),
    ...(opts.description !== undefined ? { descriptionMd: opts.description } : {}),
    ...(opts.priority ? { priority: opts.priority } : {}),
    ...(opts.type ? { type: opts.type } : {}),
  } as WorkItemCreate;
  const item = await connect(ctx).createWorkItem(project, body);
  if (ctx.out.json) return ctx.out.document(item);
  ctx.out.data(item.key);
  ctx.out.info(`Created ${item.key}: ${item.title}`);
}

export async function itemsEdit(
  ctx: Context,
  key: string,
  opts: { title?: string; description?: string; priority?: string; assignee?: string; explanation?: string },
): Promise<void> {
  const body: WorkItemUpdate = {
    ...(opts.title !== undefined ? { title: opts.title } : {}),
    ...(opts.description !== undefined ? { descriptionMd: opts.description } : {}),
    ...(opts.priority !== undefined ? { priority: opts.priority as WorkItemUpdate['priority'] } : {}),
    ...(opts.assignee !== undefined ? { assigneeId: opts.assignee === 'none' ? null : opts.assignee } : {}),
    ...(opts.explanation !== undefined ? { explanationMd: opts.explanation } : {}),
  };
  if (Object.keys(body).length === 0) throw new UsageError('nothing to change: pass --title, --description, --priority, --assignee or --explanation');
  const api = connect(ctx);
  // The edit is made against what we read: if someone else changed the item in between, the
  // service answers 412 and we say so instead of overwriting their change.
  const { etag } = await api.getWorkItem(checkKey(key));
  try {
    const { item } = await api.updateWorkItem(key, body, etag ? { ifMatch: etag } : {});
    if (ctx.out.json) return ctx.out.document(item);
    ctx.out.info(`Updated ${item.key}`);
  } catch (error) {
    if (error instanceof ApiError && error.status === 412) {
      throw Object.assign(new Error(`${key} changed while it was being edited; run the command again to edit the new version`), { exitCode: EXIT.failed });
    }
    throw error;
  }
}

interface LaneOpts {
  project?: string;
  priority?: string[];
  assignee?: string;
  sprint?: string;
  kind?: string[];
  ancestor?: string[];
  allowSoftBlock?: boolean;
}

export function readyLane(lane: 'bugs' | 'containers') {
  return async (ctx: Context, opts: LaneOpts): Promise<void> => {
    const project = requireProject(ctx, opts.project);
    const api = connect(ctx);
    const filters = {
      ...(opts.priority ? { priority: opts.priority } : {}),
      ...(opts.assignee ? { assigneeId: opts.assignee } : {}),
      ...(opts.sprint ? { sprintId: opts.sprint } : {}),
    };
    if (lane === 'containers') {
      const rows = [];
      for await (const c of paginate((cursor) => api.listReadyContainers(project, { ...filters, cursor, limit: 100 }))) rows.push(c);
      if (ctx.out.json) return ctx.out.document(rows);
      return ctx.out.table(['KEY', 'KIND', 'PRIORITY', 'READY', 'CHILDREN', 'TITLE'], rows.map((c) => [c.key, c.kind, c.priority, String(c.readyLeafCount), String(c.childCount), c.title]));
    }
    const bugFilters = {
      ...filters,
      ...(opts.kind ? { kind: opts.kind } : {}),
      ...(opts.ancestor ? { ancestor: opts.ancestor } : {}),
      ...(opts.allowSoftBlock ? { allowSoftBlock: 'true' } : {}),
    };
    const groups = [];
    for await (const g of paginate((cursor) => api.listReadyBugs(project, { ...bugFilters, cursor, limit: 100 }))) groups.push(g);
    if (ctx.out.json) return ctx.out.document(groups);
    ctx.out.table(
      ['GROUP', 'KEY', 'KIND', 'PRIORITY', 'TITLE'],
      groups.flatMap((g) => g.items.map((i) => [g.container?.key ?? '-', i.key, i.kind, i.priority, i.title])),
    );
  };
}
