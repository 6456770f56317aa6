// `svc folders create NAME`: createFolder. The name is checked by the service (trimmed, 1–120 characters,
// unique among siblings ignoring case) so there is one rule, not two that could drift.
import { connect } from '../connect.js';
import type { Context } from '../context.js';
import { requireProject } from '../settings.js';
import { folderPath } from './list.js';
import type { FoldersCreateFlags } from './flags.js';

/** The flags of `svc folders create` (and the name), as its table in register.ts declares them. */
export type FoldersCreateOptions = FoldersCreateFlags & { name: string };

export async function runFoldersCreate(opts: FoldersCreateOptions, ctx: Context): Promise<void> {
  const project = requireProject(ctx, opts.project);
  const folder = await connect(ctx).createFolder(project, { name: opts.name, ...(opts.parent ? { parentFolderId: opts.parent } : {}) });
  if (ctx.out.json) return ctx.out.document(folder);
  ctx.out.data(folder.id);
  ctx.out.info(`Created folder ${folderPath(folder)}`);
}
