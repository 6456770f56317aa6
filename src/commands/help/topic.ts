// `svc help [topic...]`: a command's help, down the tree like `git help` and `gh help`, or the
// exit-codes topic.
import type { Command } from 'commander';
import type { Context } from '../context.js';
import { EXIT, EXIT_CODE_HELP } from '../exit-codes.js';

export interface HelpOptions {
  topic: string[];
  /** The command tree the topic is looked up in. */
  program: Command;
}

export function runHelp(opts: HelpOptions, ctx: Context): void {
  const { topic } = opts;
  if (topic.length === 1 && topic[0] === 'exit-codes') {
    if (ctx.out.json) return ctx.out.document(EXIT_CODE_HELP.map(([code, meaning]) => ({ code, meaning })));
    for (const [code, meaning] of EXIT_CODE_HELP) ctx.out.data(`${String(code).padStart(3)}  ${meaning}`);
    return;
  }
  // `svc help items list` is `svc items list --help`.
  let target: Command = opts.program;
  for (const word of topic) {
    const next = target.commands.find((c) => c.name() === word || c.aliases().includes(word));
    if (!next)
      throw Object.assign(new Error(`unknown help topic '${topic.join(' ')}'; try \`svc help exit-codes\` or \`svc --help\``), { exitCode: EXIT.usage });
    target = next;
  }
  ctx.out.data(target.helpInformation().trimEnd());
}
