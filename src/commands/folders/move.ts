// `svc folders move ID`: updateFolder as a placement. The contract names anchors by where the *sibling*
// sorts: `beforeId` is the sibling that sorts before the folder (so the folder goes after it),
// `afterId` the one that sorts after it. The flags say where the *folder* goes, as a person would:
// `--after X` is `beforeId: X`, `--before Y` is `afterId: Y`, `--first` is `beforeId: null`,
// `--last` is `afterId: null`.
import { ApiError } from '../../api/errors.js';
import type { FolderUpdate } from '../../contract/types.js';
import { connect } from '../connect.js';
import type { Context } from '../context.js';
import { UsageError } from '../exit-codes.js';
import { folderPath } from './list.js';
import type { FoldersMoveFlags } from './flags.js';

/** The flags of `folders move`, with the folder's id. */
export type FoldersMoveOptions = FoldersMoveFlags & { id: string };

/** The body of updateFolder for these flags, or a usage error naming the clash. */
export function placementOf(opts: FoldersMoveOptions): FolderUpdate {
  if (opts.parent !== undefined && opts.root) throw new UsageError('--parent and --root are exclusive: pick one destination');
  const ends = [opts.first && '--first', opts.last && '--last'].filter(Boolean);
  const anchors = [...ends, opts.after !== undefined && '--after', opts.before !== undefined && '--before'].filter(Boolean);
  if (ends.length > 0 && anchors.length > 1) throw new UsageError(`${anchors.join(' and ')} cannot be combined: --first and --last stand alone`);
  const body: FolderUpdate = {
    ...(opts.parent !== undefined ? { parentFolderId: opts.parent } : {}),
    ...(opts.root ? { parentFolderId: null } : {}),
    ...(opts.after !== undefined ? { beforeId: opts.after } : {}),
    ...(opts.before !== undefined ? { afterId: opts.before } : {}),
    ...(opts.first ? { beforeId: null } : {}),
    ...(opts.last ? { afterId: null } : {}),
  };
  if (Object.keys(body).length === 0) throw new UsageError('nothing to do: pass --parent ID, --root, --after ID, --before ID, --first or --last');
  return body;
}

export async function runFoldersMove(opts: FoldersMoveOptions, ctx: Context): Promise<void> {
  const body = placementOf(opts);
  const folder = await connect(ctx)
    .updateFolder(opts.id, body)
    .catch((error: unknown) => {
      // An anchor the service refuses is named by the contract's field; say which flag set it.
      if (error instanceof ApiError && error.code === 'INVALID_REQUEST' && (body.beforeId !== undefined || body.afterId !== undefined)) {
        error.message += ' (--after/--first set beforeId, --before/--last set afterId)';
      }
      throw error;
    });
  if (ctx.out.json) return ctx.out.document(folder);
  const where = opts.first
    ? ', first'
    : opts.last
      ? ', last'
      : [opts.after && ` after ${opts.after}`, opts.before && ` before ${opts.before}`].filter(Boolean).join(' and');
  ctx.out.info(`Moved ${folder.id} to ${folderPath(folder)}${where}`);
}
