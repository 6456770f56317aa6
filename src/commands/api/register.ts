import type { Command } from 'commander';
import type { Context } from '../context.js';
import { withExamples } from '../examples.js';
import type { ApiOptions } from './api.js';

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function registerApi(program: Command, context: (cmd: Command) => Context): void {
  withExamples(
    program
      .command('api <method> <path>')
      .description('call any operation of the contract, like `gh api`')
      .option('-f, --field <key=value>', 'a body field (or a query parameter on GET; repeatable)', collect)
      .option('--input <file>', 'the request body from a file (- for stdin)')
      .option('--paginate', 'follow nextCursor and print every row')
      .action(async (method: string, path: string, opts: Omit<ApiOptions, 'method' | 'path'>, cmd: Command) => {
        const { runApi } = await import('./api.js');
        await runApi({ ...opts, method, path }, context(cmd));
      }),
    'svc api GET /me',
    'svc api GET /projects/PROJ/work-items --paginate -f filter="kind:bug"',
    'svc api PATCH /work-items/PROJ-12 -f priority=high',
  );
}
