// `svc server done KEY...`: marks work items done in the local service's database (not /api/v1).
import type { Context } from '../context.js';

export interface ServerDoneOptions {
  db: string;
  keys: string[];
  status: string;
}

export async function runServerDone(opts: ServerDoneOptions, ctx: Context): Promise<void> {
  const { runServerCommand } = await import('../../server/index.js');
  ctx.exitCode = await runServerCommand({ command: 'done', ...opts }, { stdout: ctx.stdout, stderr: ctx.stderr });
}
