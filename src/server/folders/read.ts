// listFolders (one level of child folders, in tree order) and 15 (one folder).
import { projectForKey } from '../core/access.js';
import { pageOfList, readPaging } from '../cursors.js';
import { ServiceError, notFound, type Reply, type RequestContext } from '../kernel.js';
import { childFolders, getFolderRow, inReach, toFolder } from './store.js';

export function listFolders(ctx: RequestContext): Reply {
  const project = projectForKey(ctx.db, ctx.principal, ctx.params.projectKey!);
  const parentParam = ctx.query.get('parentFolderId') ?? '';
  let parentId: string | null = null;
  if (parentParam !== '') {
    const parent = getFolderRow(ctx.db, parentParam);
    // listFolders names one code for every way the parent can be wrong, another project's folder included.
    if (!parent || !inReach(ctx.db, ctx.principal, parent) || parent.project_id !== project.id) {
      throw new ServiceError(404, 'FOLDER_NOT_FOUND', `parentFolderId ${parentParam} is not a folder of project ${project.key}`);
    }
    parentId = parent.id;
  }
  const paging = readPaging(ctx.query, ctx.cursors, `folders:${project.id}:${parentId ?? ''}`);
  const page = pageOfList(childFolders(ctx.db, project.id, parentId), paging, ctx.cursors);
  return { status: 200, body: { items: page.items.map((r) => toFolder(ctx.db, r, project.key)), nextCursor: page.nextCursor } };
}

export function getFolder(ctx: RequestContext): Reply {
  const folder = getFolderRow(ctx.db, ctx.params.folderId!);
  // Another workspace, a project outside the token, and a missing id all answer the same 404.
  if (!folder || !inReach(ctx.db, ctx.principal, folder)) throw notFound('folder');
  return { status: 200, body: toFolder(ctx.db, folder, folder.project_key) };
}
