// `svc server`: runs the local service until a signal stops it.
import type { Context } from '../context.js';

export interface ServeOptions {
  port: number;
  host: string;
  db?: string;
  seed?: 'demo';
  rateLimit?: string;
  gitRoot?: string;
}

export async function runServe(opts: ServeOptions, ctx: Context): Promise<void> {
  const { runServerCommand } = await import('../../server/index.js');
  // The first signal stops the server (closed, the database flushed); exit 130/143.
  ctx.interrupts.handle?.('graceful');
  ctx.exitCode = await runServerCommand({ command: 'serve', ...opts }, { stdout: ctx.stdout, stderr: ctx.stderr, signal: ctx.interrupts.signal });
}
