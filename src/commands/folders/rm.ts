// `svc folders rm ID`: deleteFolder. Nothing inside is deleted: the service moves the child folders and
// filed work items to the folder's parent, or refuses the whole delete. We read the folder first
// only to name it and its destination in what we print.
import { connect } from '../connect.js';
import type { Context } from '../context.js';
import { folderPath } from './list.js';

export interface FoldersRemoveOptions {
  id: string;
}

export async function runFoldersRemove(opts: FoldersRemoveOptions, ctx: Context): Promise<void> {
  const api = connect(ctx);
  const folder = await api.getFolder(opts.id);
  const deleted = await api.deleteFolder(opts.id);
  if (ctx.out.json) return ctx.out.document(deleted);
  // Rows of what moved, for scripts; the sentence for people.
  ctx.out.table(['MOVED', 'ID'], [...deleted.movedFolderIds.map((id) => ['folder', id]), ...deleted.movedWorkItemIds.map((id) => ['work-item', id])]);
  const destination = deleted.destinationFolderId === null ? 'the project root' : folderPath({ path: folder.path.slice(0, -1) });
  ctx.out.info(
    `Removed ${folderPath(folder)}; moved ${plural(deleted.movedFolderIds.length, 'folder')} and ${plural(deleted.movedWorkItemIds.length, 'work item')} to ${destination}`,
  );
}

const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;
