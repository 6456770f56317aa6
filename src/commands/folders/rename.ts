// `svc folders rename ID NAME`: updateFolder with a name only (a rename is never also a placement).
import { connect } from '../connect.js';
import type { Context } from '../context.js';
import { folderPath } from './list.js';

export interface FoldersRenameOptions {
  id: string;
  name: string;
}

export async function runFoldersRename(opts: FoldersRenameOptions, ctx: Context): Promise<void> {
  const folder = await connect(ctx).updateFolder(opts.id, { name: opts.name });
  if (ctx.out.json) return ctx.out.document(folder);
  ctx.out.info(`Renamed ${folder.id} to ${folderPath(folder)}`);
}
