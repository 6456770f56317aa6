// `svc runs cancel RUN`: closes a run nobody is running (interrupted, cancelled).
import { cancelRun } from '../../dispatch/state/runs.js';
import { resolveStateDir } from '../../dispatch/state/folder.js';
import { connect } from '../connect.js';
import type { Context } from '../context.js';

export interface RunsCancelOptions {
  runId: string;
}

export async function runRunsCancel(opts: RunsCancelOptions, ctx: Context): Promise<void> {
  const { runId } = opts;
  const { dispatchServiceOf } = await import('../../dispatch/wire/service.js');
  const api = connect(ctx, { interruptible: false });
  try {
    const result = await cancelRun(dispatchServiceOf(api), resolveStateDir(ctx.env), runId);
    if (ctx.out.json) return ctx.out.document({ runId, ...result });
    ctx.out.info(
      result.action === 'cancelled'
        ? `Cancelled run ${runId} (${result.stopReason}, ${result.status}).`
        : `Run ${runId} is already closed (${result.status}${result.stopReason ? `, ${result.stopReason}` : ''}).`,
    );
  } finally {
    await api.close();
  }
}
