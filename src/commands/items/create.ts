// `svc items create`: createWorkItem. The new key goes to stdout (scripts capture it), the sentence to stderr.
import type { WorkItemCreate } from '../../contract/types.js';
import { connect } from '../connect.js';
import type { Context } from '../context.js';
import { requireProject } from '../settings.js';
import { checkKey } from './key.js';
import type { ItemsCreateFlags } from './flags.js';

/** The flags of `svc items create`, as its table in register.ts declares them. */
export type ItemsCreateOptions = ItemsCreateFlags;

export async function runItemsCreate(opts: ItemsCreateOptions, ctx: Context): Promise<void> {
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
