// `svc help exit-codes` and `svc completion bash|zsh|fish`.
import { Argument, type Command } from 'commander';
import { EXIT_CODE_HELP } from '../exit-codes.js';
import type { Context } from '../context.js';
import { withExamples } from '../program.js';

export function registerHelpTopics(program: Command, context: (cmd: Command) => Context): void {
  program.addHelpCommand(false);
  const help = program.command('help [topic]').description('show help for a command, or a topic: exit-codes');
  help.action((topic: string | undefined, _o, cmd: Command) => {
    const ctx = context(cmd);
    if (topic === 'exit-codes') {
      if (ctx.out.json) return ctx.out.document(EXIT_CODE_HELP.map(([code, meaning]) => ({ code, meaning })));
      for (const [code, meaning] of EXIT_CODE_HELP) ctx.out.data(`${String(code).padStart(3)}  ${meaning}`);
      return;
    }
    const target = topic ? program.commands.find((c) => c.name() === topic || c.aliases().includes(topic)) : program;
    if (!target) throw Object.assign(new Error(`unknown help topic '${topic}'; try \`svc help exit-codes\` or \`svc --help\``), { exitCode: 2 });
    ctx.out.data(target.helpInformation().trimEnd());
  });
  withExamples(help, 'svc help exit-codes', 'svc help run');

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
