// `svc runs cancel RUN`: closes a run nobody is running (interrupted, cancelled).
import { cancelLocalRun, resolveStateDir } from '../../dispatch/index.js';
import { connect } from '../connect.js';
import type { Context } from '../context.js';

export interface RunsCancelOptions {
  runId: string;
}

export async function runRunsCancel(opts: RunsCancelOptions, ctx: Context): Promise<void> {
  const { runId } = opts;
  const api = connect(ctx, { interruptible: false });
  try {
    const result = await cancelLocalRun(api, resolveStateDir(ctx.env), runId);
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
