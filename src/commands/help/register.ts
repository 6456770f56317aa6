// `svc help exit-codes` and `svc completion bash|zsh|fish`.
import { Argument, type Command } from 'commander';
import { EXIT_CODE_HELP } from '../exit-codes.js';
import type { Context } from '../context.js';
import { withExamples } from '../program.js';

export function registerHelpTopics(program: Command, context: (cmd: Command) => Context): void {
  program.addHelpCommand(false);
  const help = program.command('help [topic...]').description('show help for a command or subcommand, or a topic: exit-codes');
  help.action((topic: string[], _o, cmd: Command) => {
    const ctx = context(cmd);
    if (topic.length === 1 && topic[0] === 'exit-codes') {
      if (ctx.out.json) return ctx.out.document(EXIT_CODE_HELP.map(([code, meaning]) => ({ code, meaning })));
      for (const [code, meaning] of EXIT_CODE_HELP) ctx.out.data(`${String(code).padStart(3)}  ${meaning}`);
      return;
    }
    // Down the tree, like `git help` and `gh help`: `svc help items list` is `svc items list --help`.
    let target: Command = program;
    for (const word of topic) {
      const next = target.commands.find((c) => c.name() === word || c.aliases().includes(word));
      if (!next) throw Object.assign(new Error(`unknown help topic '${topic.join(' ')}'; try \`svc help exit-codes\` or \`svc --help\``), { exitCode: 2 });
      target = next;
    }
    ctx.out.data(target.helpInformation().trimEnd());
  });
  withExamples(help, 'svc help exit-codes', 'svc help run', 'svc help items list');

  const completion = program
    .command('completion')
    .description('print a shell completion script')
    .addArgument(new Argument('<shell>', 'the shell').choices(['bash', 'zsh', 'fish']));
  completion.action(async (shell: 'bash' | 'zsh' | 'fish', _o, cmd: Command) => {
    const { completionScript } = await import('./completion.js');
    context(cmd).out.data(completionScript(program, shell));
  });
  withExamples(completion, 'svc completion bash > ~/.local/share/bash-completion/completions/svc', 'svc completion fish > ~/.config/fish/completions/svc.fish');
}
