import type { Command } from 'commander';
import type { Context } from '../context.js';
import { withExamples } from '../examples.js';
import { addFlags, flagsOf } from '../flag-table.js';
import { API_FLAGS } from './flags.js';

export function registerApi(program: Command, context: (cmd: Command) => Context): void {
  withExamples(
    addFlags(program.command('api <method> <path>').description('call any operation of the contract, like `gh api`'), API_FLAGS).action(
      async (method: string, path: string, _o: unknown, cmd: Command) => {
        const { runApi } = await import('./api.js');
        await runApi({ ...flagsOf(cmd, API_FLAGS), method, path }, context(cmd));
      },
    ),
    'svc api GET /me',
    'svc api GET /projects/PROJ/work-items --paginate -f filter="kind:bug"',
    'svc api PATCH /work-items/PROJ-12 -f priority=high',
  );
}
