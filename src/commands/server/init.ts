// `svc server init` and `svc server delivery`: offline use of the local service without the demo
// seed (docs/service.md). The service's own runServerCommand writes the database.
import type { Context } from '../context.js';

export interface ServerInitOptions {
  db: string;
  workspace: string;
  project: string;
  name?: string;
  repos: string[];
}

export interface ServerDeliveryOptions {
  db: string;
  key: string;
  number: number;
  state: string;
  ci?: string;
  url?: string;
}

export async function runServerInit(opts: ServerInitOptions, ctx: Context): Promise<void> {
  const { runServerCommand } = await import('../../server/index.js');
  ctx.exitCode = await runServerCommand({ command: 'init', ...opts }, { stdout: ctx.stdout, stderr: ctx.stderr });
}

export async function runServerDelivery(opts: ServerDeliveryOptions, ctx: Context): Promise<void> {
  const { runServerCommand } = await import('../../server/index.js');
  ctx.exitCode = await runServerCommand({ command: 'delivery', ...opts }, { stdout: ctx.stdout, stderr: ctx.stderr });
}
