// createFolder (create) and 16 (rename or placement). A placement writes exactly one row: the
// moved folder gets a new parent and a position strictly between its new neighbours.
import { API_PREFIX } from '../../contract/operations.js';
import type { FolderCreate, FolderUpdate } from '../../contract/types.js';
import { projectForKey } from '../core/access.js';
import { transaction, type Database } from '../db.js';
import { iso, newId } from '../ids.js';
import { invalid, notFound, ServiceError, type Reply, type RequestContext } from '../kernel.js';
import { positionBetween } from './positions.js';
import {
  childFolders,
  folderInProject,
  getFolderRow,
  inReach,
  nameTaken,
  nameTakenError,
  toFolder,
  validFolderName,
  type FolderRow,
  type LocatedFolder,
} from './store.js';

const PLACEMENT_FIELDS = ['parentFolderId', 'beforeId', 'afterId'] as const;

export function createFolder(ctx: RequestContext): Reply {
  const project = projectForKey(ctx.db, ctx.principal, ctx.params.projectKey!);
  const body = (ctx.body ?? {}) as FolderCreate;
  if (typeof body.name !== 'string') throw invalid('name is required');
  const name = validFolderName(body.name);
  return transaction(ctx.db, () => {
    const parentId = body.parentFolderId == null ? null : folderInProject(ctx.db, ctx.principal, project.id, body.parentFolderId, 'parentFolderId').id;
    if (nameTaken(ctx.db, project.id, parentId, name)) throw nameTakenError(name);
    // Appended last among its siblings (createFolder).
    const last = childFolders(ctx.db, project.id, parentId).at(-1);
    const now = iso(ctx.now());
    const row: FolderRow = {
      id: newId('fld'),
      project_id: project.id,
      parent_id: parentId,
      name,
      position: positionBetween(last?.position ?? null, null),
      created_at: now,
      updated_at: now,
    };
    ctx.db
      .prepare(
        `INSERT INTO folders (id, project_id, parent_id, name, position, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(row.id, row.project_id, row.parent_id, row.name, row.position, row.created_at, row.updated_at);
    return {
      status: 201,
      body: toFolder(ctx.db, row, project.key),
      headers: { Location: `${API_PREFIX}/folders/${row.id}` },
    };
  });
}

export function updateFolder(ctx: RequestContext): Reply {
  const folder = getFolderRow(ctx.db, ctx.params.folderId!);
  if (!folder || !inReach(ctx.db, ctx.principal, folder)) throw notFound('folder');
  const body = (ctx.body ?? {}) as FolderUpdate;
  const placing = PLACEMENT_FIELDS.filter((f) => f in body);
  if ('name' in body && placing.length > 0) {
    throw invalid('a folder update is either a rename (name) or a placement (parentFolderId, beforeId, afterId), never both');
  }
  if (!('name' in body) && placing.length === 0) {
    throw invalid('nothing to change: send name, or parentFolderId/beforeId/afterId');
  }
  return transaction(ctx.db, () => {
    if ('name' in body) rename(ctx.db, folder, body.name!, iso(ctx.now()));
    else place(ctx, folder, body);
    const after = getFolderRow(ctx.db, folder.id)!;
    return { status: 200, body: toFolder(ctx.db, after, after.project_key) };
  });
}

function rename(db: Database, folder: LocatedFolder, raw: string, now: string): void {
  if (typeof raw !== 'string') throw invalid('name must be a string');
  const name = validFolderName(raw);
  if (name === folder.name) return;
  // Its own name in another case is not a clash: `exceptId` skips the folder itself.
  if (nameTaken(db, folder.project_id, folder.parent_id, name, folder.id)) throw nameTakenError(name);
  db.prepare('UPDATE folders SET name = ?, updated_at = ? WHERE id = ?').run(name, now, folder.id);
}

/**
 * Moves and/or reorders. `beforeId` names the sibling that will sort just before the folder
 * (so the folder goes right after it); `afterId` the sibling that will sort just after it. A null
 * anchor means that edge: `beforeId: null` places it first, `afterId: null` places it last.
 */
function place(ctx: RequestContext, folder: LocatedFolder, body: FolderUpdate): void {
  const { db, principal } = ctx;
  let parentId = folder.parent_id;
  if ('parentFolderId' in body) {
    parentId = body.parentFolderId ?? null;
    if (parentId !== null) {
      const dest = folderInProject(db, principal, folder.project_id, parentId, 'parentFolderId');
      if (isSelfOrDescendant(db, folder.id, dest)) {
        throw new ServiceError(422, 'FOLDER_CYCLE', 'a folder cannot move into itself or one of its descendants');
      }
    }
  }
  const parentChanges = parentId !== folder.parent_id;
  if (parentChanges && nameTaken(db, folder.project_id, parentId, folder.name, folder.id)) {
    throw nameTakenError(folder.name);
  }
  const siblings = childFolders(db, folder.project_id, parentId).filter((f) => f.id !== folder.id);
  const indexOf = (field: 'beforeId' | 'afterId'): number | null => {
    const id = body[field];
    if (id === undefined) return null;
    if (id === null) return field === 'beforeId' ? -1 : siblings.length;
    if (id === folder.id) throw invalid(`${field} names the folder itself`);
    const anchor = folderInProject(db, principal, folder.project_id, id, field);
    const i = siblings.findIndex((s) => s.id === anchor.id);
    if (i < 0) throw invalid(`${field} ${id} is not a sibling at the destination`);
    return i;
  };
  const before = indexOf('beforeId');
  const after = indexOf('afterId');
  if (before === null && after === null && !parentChanges) return; // same parent, no anchor: stays
  let pred: number;
  if (before !== null && after !== null) {
    if (after !== before + 1) throw invalid('beforeId and afterId are not adjacent siblings');
    pred = before;
  } else if (before !== null) pred = before;
  else if (after !== null) pred = after - 1;
  else pred = siblings.length - 1; // a move without anchors appends last, like a create
  const lo = pred >= 0 ? siblings[pred]!.position : null;
  const hi = pred + 1 < siblings.length ? siblings[pred + 1]!.position : null;
  db.prepare('UPDATE folders SET parent_id = ?, position = ?, updated_at = ? WHERE id = ?').run(parentId, positionBetween(lo, hi), iso(ctx.now()), folder.id);
}

/** True when `dest` is the folder itself or lies beneath it. */
function isSelfOrDescendant(db: Database, folderId: string, dest: FolderRow): boolean {
  let cursor: string | null = dest.id;
  const seen = new Set<string>();
  while (cursor !== null && !seen.has(cursor)) {
    if (cursor === folderId) return true;
    seen.add(cursor);
    const row = db.prepare('SELECT parent_id FROM folders WHERE id = ?').get(cursor) as { parent_id: string | null } | undefined;
    cursor = row?.parent_id ?? null;
  }
  return false;
}
