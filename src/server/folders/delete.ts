// deleteFolder: delete a folder, keeping everything inside. Child folders take the deleted
// folder's place among its siblings (in their own order) and filed work items move to its parent,
// or to the project root. Every refusal is decided before the first write, and the writes share
// one transaction, so a refused delete changes nothing.
import type { FolderDeleted } from '../../contract/types.js';
import { transaction } from '../db.js';
import { iso } from '../ids.js';
import { notFound, ServiceError, type Reply, type RequestContext } from '../kernel.js';
import { positionsBetween } from './positions.js';
import { childFolders, getFolderRow, inReach, nameTakenError } from './store.js';

interface FiledItem {
  id: string;
  key: string;
  kind: string;
  parent_id: string | null;
}

export function deleteFolder(ctx: RequestContext): Reply {
  const { db } = ctx;
  const folder = getFolderRow(db, ctx.params.folderId!);
  if (!folder || !inReach(db, ctx.principal, folder)) throw notFound('folder');

  return transaction(db, () => {
    const destination = folder.parent_id;
    const children = childFolders(db, folder.project_id, folder.id);
    const siblings = childFolders(db, folder.project_id, destination);
    const fold = (s: string) => s.toLocaleLowerCase('und');
    const siblingNames = new Set(siblings.filter((s) => s.id !== folder.id).map((s) => fold(s.name)));
    const clash = children.find((c) => siblingNames.has(fold(c.name)));
    if (clash) throw nameTakenError(clash.name);

    const items = db.prepare('SELECT id, key, kind, parent_id FROM work_items WHERE folder_id = ? ORDER BY number').all(folder.id) as unknown as FiledItem[];
    // A subtask is placed by its parent or its folder; leaving the root folder would strip both.
    const stranded = destination === null ? items.find((i) => i.kind === 'subtask' && i.parent_id === null) : undefined;
    if (stranded) {
      throw new ServiceError(
        409,
        'SUBTASK_NEEDS_PLACEMENT',
        `subtask ${stranded.key} has no parent and would be left with no folder; give it a parent or move it first`,
      );
    }

    const at = siblings.findIndex((s) => s.id === folder.id);
    const lo = at > 0 ? siblings[at - 1]!.position : null;
    const hi = at + 1 < siblings.length ? siblings[at + 1]!.position : null;
    const positions = positionsBetween(lo, hi, children.length);
    const now = iso(ctx.now());
    const move = db.prepare('UPDATE folders SET parent_id = ?, position = ?, updated_at = ? WHERE id = ?');
    children.forEach((c, i) => move.run(destination, positions[i]!, now, c.id));
    db.prepare('UPDATE work_items SET folder_id = ? WHERE folder_id = ?').run(destination, folder.id);
    db.prepare('DELETE FROM folders WHERE id = ?').run(folder.id);

    const body: FolderDeleted = {
      deletedFolderId: folder.id,
      destinationFolderId: destination,
      movedFolderIds: children.map((c) => c.id),
      // Internal ids, as the field's name says (like a run's scopeWorkItemId), in key order.
      movedWorkItemIds: items.map((i) => i.id),
    };
    return { status: 200, body };
  });
}
