// `svc runs recover [RUN]`: hands the runs whose svc died to the engine's recovery.
import { recoverLocalRuns, removeOrphanLegs, removeStaleFences, resolveStateDir } from '../../dispatch/index.js';
import { connect } from '../connect.js';
import type { Context } from '../context.js';
import { EXIT } from '../exit-codes.js';

export interface RunsRecoverOptions {
  runId?: string;
}

export async function runRunsRecover(opts: RunsRecoverOptions, ctx: Context): Promise<void> {
  const { resolveBaseUrl } = await import('../settings.js');
  const current = resolveBaseUrl(ctx);
  const clients: { close(): Promise<void> }[] = [];
  try {
    const results = await recoverLocalRuns(
      {
        stateDir: resolveStateDir(ctx.env),
        // The token belongs to the configured service: a run recorded against another one is left
        // alone rather than sent a credential it was never meant to see.
        clientFor: (record) => {
          if (record.baseUrl.replace(/\/+$/, '') !== current) return null;
          const api = connect(ctx, { interruptible: false });
          clients.push(api);
          return api;
        },
        output: { info: (m) => ctx.out.info(m), warn: (m) => ctx.out.warn(m) },
      },
      opts.runId,
    );
    // Agents' leg folders (svc as root) of svc processes that are gone go too; said on stderr.
    for (const path of await removeOrphanLegs()) ctx.out.info(`removed the agent leg folder ${path} (its svc is gone)`);
    // A crashed svc's network fence (docs/trust.md) goes too: its table names the process.
    if (process.getuid?.() === 0) {
      for (const table of await removeStaleFences().catch(() => [])) ctx.out.info(`removed the network fence inet ${table} (its svc is gone)`);
    }
    if (ctx.out.json) return ctx.out.document(results);
    if (!results.length) return ctx.out.info('Nothing to recover: every local run is closed.');
    ctx.out.table(
      ['RUN', 'ACTION', 'SENT', 'STOP', 'STATUS', 'DETAIL'],
      results.map((r) => [r.runId, r.action, String(r.sent), r.stopReason ?? '', r.status ?? '', r.detail ?? '']),
    );
    if (results.some((r) => r.action === 'failed')) ctx.exitCode = EXIT.failed;
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
}
