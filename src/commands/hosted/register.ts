// Hosted runs: `svc attach` (execute this container's run, or show it with --dry-run) and `svc
// git-credential`, the credential helper git calls for the run's repositories (hidden: people
// never type it).
import type { Command } from 'commander';
import type { Context } from '../context.js';
import { withExamples } from '../examples.js';
import { addFlags, flagsOf } from '../flag-table.js';
import { ATTACH_FLAGS } from './flags.js';

export function registerHosted(program: Command, context: (cmd: Command) => Context): void {
  withExamples(
    addFlags(
      program.command('attach').description('inside a hosted container (SVC_RUN_ID, SVC_RUN_TOKEN): execute the run (--dry-run: show what it would execute)'),
      ATTACH_FLAGS,
    ).action(async (_o: unknown, cmd: Command) => {
      const { runAttach } = await import('./attach.js');
      await runAttach(flagsOf(cmd, ATTACH_FLAGS), context(cmd));
    }),
    'SVC_RUN_ID=run_… SVC_RUN_TOKEN=… svc attach --agent-cmd "./agent.sh {prompt_file}"',
    'svc attach --dry-run --json',
  );
  program
    .command('git-credential <action>', { hidden: true })
    .description('git credential helper of a hosted run (get, store, erase); git runs it, people do not')
    .action(async (action: string, _o: unknown, cmd: Command) => {
      const { runGitCredentialCommand } = await import('./git-credential.js');
      await runGitCredentialCommand({ action }, context(cmd));
    });
}
