// `svc folders list`: one level of listFolders in tree order, or with --recursive the whole subtree,
// depth first (each folder followed by its children), which is the order of the tree as shown.
import type { ApiClient } from '../../api/client.js';
import { paginate } from '../../api/paginate.js';
import type { Folder } from '../../contract/types.js';
import { connect } from '../connect.js';
import type { Context } from '../context.js';
import { requireProject } from '../settings.js';
import type { FoldersListFlags } from './flags.js';

/** The flags of `svc folders list`, as its table in register.ts declares them. */
export type FoldersListOptions = FoldersListFlags;

export async function runFoldersList(opts: FoldersListOptions, ctx: Context): Promise<void> {
  const project = requireProject(ctx, opts.project);
  const api = connect(ctx);
  const rows: Folder[] = [];
  for await (const folder of walk(api, project, opts.parent, Boolean(opts.recursive))) rows.push(folder);
  if (ctx.out.json) return ctx.out.document(rows);
  ctx.out.table(
    ['ID', 'NAME', 'PATH'],
    rows.map((f) => [f.id, f.name, folderPath(f)]),
  );
  if (rows.length === 0) ctx.out.info(opts.parent ? `no folders in ${opts.parent}` : `no folders in ${project}`);
}

async function* walk(api: ApiClient, project: string, parent: string | undefined, recursive: boolean): AsyncGenerator<Folder> {
  const level = paginate((cursor) => api.listFolders(project, { cursor, limit: 100, ...(parent ? { parentFolderId: parent } : {}) }));
  for await (const folder of level) {
    yield folder;
    if (recursive) yield* walk(api, project, folder.id, true);
  }
}

/** The path as a person reads it: `Design / Specs`. */
export const folderPath = (f: Pick<Folder, 'path'>): string => f.path.join(' / ');
