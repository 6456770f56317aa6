// Help text every command shares, kept apart from program.ts: the register files need it, and
// program.ts imports them, so it living there made each register file an import cycle.
import type { Command } from 'commander';

/** Adds an example section to a command's help: every command shows at least one. */
export function withExamples(cmd: Command, ...examples: string[]): Command {
  return cmd.addHelpText('after', `\nExamples:\n${examples.map((e) => `  $ ${e}`).join('\n')}\n`);
}
