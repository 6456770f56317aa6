// Hosted runs: `svc attach` (execute this container's run, or show it with --dry-run) and `svc
// git-credential`, the credential helper git calls for the run's repositories (hidden: people
// never type it).
import { Option, type Command } from 'commander';
import type { Context } from '../context.js';
import { withExamples } from '../examples.js';
import { addPullRequestFlags } from '../dispatch/register.js';
import type { HostedRunFlags } from './run.js';

export function registerHosted(program: Command, context: (cmd: Command) => Context): void {
  withExamples(
    addPullRequestFlags(program
      .command('attach')
      .description('inside a hosted container (SVC_RUN_ID, SVC_RUN_TOKEN): execute the run (--dry-run: show what it would execute)')
      .option('--repo <dir>', 'the workspace the run\'s repositories are cloned into (SVC_REPO; default: the current directory)')
      .option('--agent <name>', 'agent preset (default: the run\'s agent): claude, codex, aider, gemini, opencode')
      .option('--agent-cmd <command>', 'any agent command; placeholders {prompt_file} {key} {workdir} {branch} {run_id}')
      .option('--model <model>', 'model passed to the agent preset (default: the run\'s model)')
      .option('--agent-user <name>', 'who agents run as when svc is root (SVC_AGENT_USER): a user, a uid range FIRST-LAST, or none (svc\'s own); default svc-agent-1, -2, …, a uid per leg')
      .option('--dry-run', 'print the run\'s legs, repositories and branches; execute nothing, mint no git token')
      .addOption(new Option('--on-failure <mode>', 'what a failed leg does to the run (default halt)').choices(['halt', 'continue']))
      .option('--parallel <n>', 'legs run at once, each in its own worktree')
      .option('--timeout <duration>', 'whole-run time limit; the run closes timed_out')
      .option('--idle-timeout <duration>', 'stop an agent silent this long (default 15m)')
      .option('--card-timeout <duration>', 'stop an agent running this long (default 60m)')
      .option('--kill-grace <duration>', 'wait between SIGTERM and SIGKILL (default 10s)')
      .option('--send-logs', 'send agent output to the service as event bodies (redacted)')
      .option('--allow-empty', 'a leg that leaves no commit is not failed')
      .option('--max-cost <usd>', 'stop the run once the agents report this much spend')
      .option('--no-worktree', 'run in place in the clone instead of a worktree per card')
      .option('--push', 'push an implemented leg\'s branch (the default)')
      .option('--no-push', 'do not push implemented legs\' branches'))
      .action(async (flags: HostedRunFlags, cmd: Command) => {
        const { runAttach } = await import('./attach.js');
        await runAttach(flags, context(cmd));
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
