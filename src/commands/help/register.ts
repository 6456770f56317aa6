// `svc help [topic...]` and `svc completion bash|zsh|fish`.
import { Argument, type Command } from 'commander';
import type { Context } from '../context.js';
import { withExamples } from '../examples.js';

export function registerHelpTopics(program: Command, context: (cmd: Command) => Context): void {
  program.addHelpCommand(false);
  const help = program.command('help [topic...]').description('show help for a command or subcommand, or a topic: exit-codes');
  help.action(async (topic: string[], _o, cmd: Command) => {
    const { runHelp } = await import('./topic.js');
    runHelp({ topic, program }, context(cmd));
  });
  withExamples(help, 'svc help exit-codes', 'svc help run', 'svc help items list');

  const completion = program
    .command('completion')
    .description('print a shell completion script')
    .addArgument(new Argument('<shell>', 'the shell').choices(['bash', 'zsh', 'fish']));
  completion.action(async (shell: 'bash' | 'zsh' | 'fish', _o, cmd: Command) => {
    const { runCompletion } = await import('./completion.js');
    runCompletion({ shell, program }, context(cmd));
  });
  withExamples(completion, 'svc completion bash > ~/.local/share/bash-completion/completions/svc', 'svc completion fish > ~/.config/fish/completions/svc.fish');
}
