// `svc items edit KEY`: updateWorkItem, made against the version this command read (If-Match).
import { ApiError } from '../../api/errors.js';
import type { WorkItemUpdate } from '../../contract/types.js';
import { connect } from '../connect.js';
import type { Context } from '../context.js';
import { EXIT, UsageError } from '../exit-codes.js';
import { checkKey } from './key.js';
import type { ItemsEditFlags } from './flags.js';

/** The flags of `svc items edit`, as its table in register.ts declares them (and the key). */
export type ItemsEditOptions = ItemsEditFlags & { key: string };

export async function runItemsEdit(opts: ItemsEditOptions, ctx: Context): Promise<void> {
  const { key } = opts;
  if (opts.status !== undefined)
    throw new UsageError(
      "--status cannot be edited: the contract's update has no status, the service moves it (on the local service: svc server done KEY --db FILE)",
    );
  const body: WorkItemUpdate = {
    ...(opts.title !== undefined ? { title: opts.title } : {}),
    ...(opts.description !== undefined ? { descriptionMd: opts.description } : {}),
    ...(opts.priority !== undefined ? { priority: opts.priority as WorkItemUpdate['priority'] } : {}),
    ...(opts.assignee !== undefined ? { assigneeId: opts.assignee === 'none' ? null : opts.assignee } : {}),
    ...(opts.explanation !== undefined ? { explanationMd: opts.explanation } : {}),
  };
  if (Object.keys(body).length === 0) throw new UsageError('nothing to change: pass --title, --description, --priority, --assignee or --explanation');
  const api = connect(ctx);
  // The edit is made against what we read: if someone else changed the item in between, the
  // service answers 412 and we say so instead of overwriting their change.
  const { etag } = await api.getWorkItem(checkKey(key));
  try {
    const { item } = await api.updateWorkItem(key, body, etag ? { ifMatch: etag } : {});
    if (ctx.out.json) return ctx.out.document(item);
    ctx.out.info(`Updated ${item.key}`);
  } catch (error) {
    if (error instanceof ApiError && error.status === 412) {
      throw Object.assign(new Error(`${key} changed while it was being edited; run the command again to edit the new version`), { exitCode: EXIT.failed });
    }
    throw error;
  }
}
