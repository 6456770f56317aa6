// `svc items show KEY`: one work item in full (getWorkItem).
import type { WorkItemDetail } from '../../contract/types.js';
import { connect } from '../connect.js';
import type { Context } from '../context.js';
import { checkKey } from './key.js';

export interface ItemsShowOptions {
  key: string;
}

export async function runItemsShow(opts: ItemsShowOptions, ctx: Context): Promise<void> {
  const { item } = await connect(ctx).getWorkItem(checkKey(opts.key));
  if (ctx.out.json) return ctx.out.document(item);
  for (const line of describe(item)) ctx.out.data(line);
}

function describe(item: WorkItemDetail): string[] {
  const lines = [
    `${item.key}  ${item.title}`,
    `${item.kind}${item.type ? `/${item.type}` : ''} · ${item.status} · ${item.priority}${item.assigneeId ? ` · ${item.assigneeId}` : ''}`,
  ];
  if (item.ancestorKeys.length) lines.push(`under ${item.ancestorKeys.join(' › ')}`);
  lines.push(
    `ready: ${item.readiness.ready ? 'yes' : `no${item.readiness.openBlockers.length ? ` (blocked by ${item.readiness.openBlockers.map((b) => b.key).join(', ')})` : ''}${item.readiness.blockedByAncestorKey ? ` (ancestor ${item.readiness.blockedByAncestorKey} is blocked)` : ''}`}`,
  );
  if (item.children.length) lines.push(`children: ${item.children.map((c) => `${c.key} [${c.status}]`).join(', ')}`);
  if (item.labels.length) lines.push(`labels: ${item.labels.map((l) => l.name).join(', ')}`);
  for (const d of item.deliveries) lines.push(`delivery: ${d.repo}#${d.number} ${d.state}${d.ci ? ` ci ${d.ci}` : ''} ${d.url}`);
  if (item.descriptionMd) lines.push('', item.descriptionMd);
  return lines;
}
