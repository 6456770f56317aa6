// Hosted runs: `svc attach` (what this container's run would execute) and `svc git-credential`, the
// credential helper git calls for the run's repositories (hidden: people never type it).
import type { Command } from 'commander';
import type { Context } from '../context.js';
import { withExamples } from '../program.js';

export function registerHosted(program: Command, context: (cmd: Command) => Context): void {
  withExamples(
    program
      .command('attach')
      .description('inside a hosted container (SVC_RUN_ID, SVC_RUN_TOKEN): read the run and show what it would execute')
      .action(async (_o: unknown, cmd: Command) => {
        const { attach } = await import('./attach.js');
        await attach(context(cmd));
      }),
    'SVC_RUN_ID=run_… SVC_RUN_TOKEN=… svc attach',
    'svc attach --json',
  );
  program
    .command('git-credential <action>', { hidden: true })
    .description('git credential helper of a hosted run (get, store, erase); git runs it, people do not')
    .action(async (action: string, _o: unknown, cmd: Command) => {
      const { gitCredential } = await import('./git-credential.js');
      await gitCredential(action, context(cmd));
    });
}
