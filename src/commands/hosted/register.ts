// Hosted runs: `svc attach` (execute this container's run, or show it with --dry-run) and `svc
// git-credential`, the credential helper git calls for the run's repositories (hidden: people
// never type it).
import type { Command } from 'commander';
import type { Context } from '../context.js';
import { withExamples } from '../examples.js';
import { DISPATCH_FLAG as D, PULL_REQUEST_FLAGS } from '../dispatch/register.js';
import { addFlags, type FlagsOf, flagsOf, rephrase } from '../flag-table.js';

/** The dispatch flags a hosted execution honours, some said the way a hosted run reads them. */
const ATTACH_FLAGS = [
  rephrase(D.repo, 'the workspace the run\'s repositories are cloned into (SVC_REPO; default: the current directory)'),
  rephrase(D.agent, 'agent preset (default: the run\'s agent): claude, codex, aider, gemini, opencode'),
  D.agentCmd,
  rephrase(D.model, 'model passed to the agent preset (default: the run\'s model)'),
  D.agentUser,
  rephrase(D.dryRun, 'print the run\'s legs, repositories and branches; execute nothing, mint no git token'),
  rephrase(D.onFailure, 'what a failed leg does to the run (default halt)'),
  D.parallel,
  D.timeout,
  D.idleTimeout,
  D.cardTimeout,
  D.killGrace,
  D.sendLogs,
  D.allowEmpty,
  rephrase(D.maxCost, 'stop the run once the agents report this much spend'),
  rephrase(D.noWorktree, 'run in place in the clone instead of a worktree per card'),
  rephrase(D.push, 'push an implemented leg\'s branch (the default)'),
  rephrase(D.noPush, 'do not push implemented legs\' branches'),
  ...PULL_REQUEST_FLAGS,
];

/** `svc attach`'s flags as commander parses them (hosted/run.ts adds a dispatch command's --project). */
export type AttachFlags = FlagsOf<typeof ATTACH_FLAGS>;

export function registerHosted(program: Command, context: (cmd: Command) => Context): void {
  withExamples(
    addFlags(
      program
        .command('attach')
        .description('inside a hosted container (SVC_RUN_ID, SVC_RUN_TOKEN): execute the run (--dry-run: show what it would execute)'),
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
