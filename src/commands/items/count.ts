// `svc items count`: the exact count of a filter (countWorkItems), not the length of a page.
import { connect } from '../connect.js';
import type { Context } from '../context.js';
import { requireProject } from '../settings.js';
import type { ItemsCountFlags } from './flags.js';

/** The flags of `svc items count`, as its table in register.ts declares them. */
export type ItemsCountOptions = ItemsCountFlags;

export async function runItemsCount(opts: ItemsCountOptions, ctx: Context): Promise<void> {
  const project = requireProject(ctx, opts.project);
  const { count } = await connect(ctx).countWorkItems(project, opts.filter ? { filter: opts.filter } : {});
  if (ctx.out.json) return ctx.out.document({ count });
  ctx.out.data(String(count));
}
