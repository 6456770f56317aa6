// `svc projects [list]` and `svc projects show KEY` (listProjects, getProject).
import type { Command } from 'commander';
import type { Context, Depth } from '../context.js';
import { withExamples } from '../examples.js';

export function registerProjects(program: Command, context: (cmd: Command) => Context, depth: Depth = 'whole'): void {
  const projects = program.command('projects').description('list projects, or show one');
  if (depth === 'top') return;
  withExamples(
    projects
      .command('list', { isDefault: true })
      .description('list the projects you may browse')
      .action(async (_opts: unknown, cmd: Command) => {
        const { runProjectsList } = await import('./list.js');
        await runProjectsList({}, context(cmd));
      }),
    'svc projects',
  );
  withExamples(
    projects
      .command('show <key>')
      .description('show one project')
      .action(async (key: string, _opts: unknown, cmd: Command) => {
        const { runProjectsShow } = await import('./show.js');
        await runProjectsShow({ key }, context(cmd));
      }),
    'svc projects show PROJ',
  );
}
