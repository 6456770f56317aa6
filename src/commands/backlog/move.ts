// `svc backlog move KEY...`: moveToBacklog. One call, so the move stays atomic: the service refuses a batch
// over its cap whole rather than this command splitting it into moves that could half succeed.
import { KEY_PATTERN } from '../../contract/types.js';
import { connect } from '../connect.js';
import type { Context } from '../context.js';
import { UsageError } from '../exit-codes.js';
import { requireProject } from '../settings.js';
import type { BacklogMoveFlags } from './flags.js';

/** The flags of `svc backlog move` (and the keys), as its table in register.ts declares them. */
export type BacklogMoveOptions = BacklogMoveFlags & { keys: string[] };

export async function runBacklogMove(opts: BacklogMoveOptions, ctx: Context): Promise<void> {
  const project = requireProject(ctx, opts.project);
  const bad = opts.keys.filter((k) => !KEY_PATTERN.test(k));
  if (bad.length > 0) throw new UsageError(`not a work item key (like PROJ-12): ${bad.join(', ')}`);
  const { movedKeys } = await connect(ctx).moveToBacklog(project, { workItemKeys: opts.keys });
  if (ctx.out.json) return ctx.out.document({ movedKeys });
  for (const key of movedKeys) ctx.out.data(key);
  ctx.out.info(`Moved ${movedKeys.length} work item${movedKeys.length === 1 ? '' : 's'} to the backlog of ${project}`);
}
