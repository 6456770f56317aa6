// `svc auth login|status|logout`: the personal access token svc sends.
import type { Command } from 'commander';
import type { Context, Depth } from '../context.js';
import { withExamples } from '../examples.js';
import { addFlags, flagsOf } from '../flag-table.js';
import { LOGIN_FLAGS } from './flags.js';

export function registerAuth(program: Command, context: (cmd: Command) => Context, depth: Depth = 'whole'): void {
  const auth = program.command('auth').description('log in, check and log out');
  if (depth === 'top') return;
  withExamples(
    addFlags(auth.command('login').description('store a personal access token read from stdin (checked against the service first)'), LOGIN_FLAGS).action(
      async (_o: unknown, cmd: Command) => {
        const { runAuthLogin } = await import('./login.js');
        await runAuthLogin(flagsOf(cmd, LOGIN_FLAGS), context(cmd));
      },
    ),
    'svc auth login --with-token < token.txt',
    'echo "$SVC_PAT" | svc auth login --with-token --base-url https://svc.example.com',
  );
  withExamples(
    auth
      .command('status')
      .description('show who the token belongs to, its workspace and scopes (token masked)')
      .action(async (_o, cmd: Command) => {
        const { runAuthStatus } = await import('./status.js');
        await runAuthStatus({}, context(cmd));
      }),
    'svc auth status',
    'svc auth status --json',
  );
  withExamples(
    auth
      .command('logout')
      .description('forget the stored token')
      .action(async (_o, cmd: Command) => {
        const { runAuthLogout } = await import('./logout.js');
        runAuthLogout({}, context(cmd));
      }),
    'svc auth logout',
  );
}
