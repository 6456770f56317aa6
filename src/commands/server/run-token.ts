// `svc server run-token RUN`: the credential a hosted runner of that run starts with, printed once.
import type { Context } from '../context.js';

export interface RunTokenOptions {
  db: string;
  runId: string;
  contractPrefix: boolean;
}

export async function runRunToken(opts: RunTokenOptions, ctx: Context): Promise<void> {
  const { runServerCommand } = await import('../../server/index.js');
  ctx.exitCode = await runServerCommand({ command: 'run-token', ...opts }, { stdout: ctx.stdout, stderr: ctx.stderr });
}
