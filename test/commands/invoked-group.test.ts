// svc builds only the command group it is asked for (program.ts): `svc config get`
// registers the config group alone, `svc --help` every top-level command and none below, and every
// answer that needs no handler (help, usage errors, suggestions) is the same as from the whole tree. The table of names it goes by is held here to
// what the register functions really add.
import { Command } from 'commander';
import { describe, expect, test } from 'vitest';
import type { Context } from '../../src/commands/context.js';
import { buildProgram, groupsForTest } from '../../src/commands/program.js';
import { runProgram } from '../../src/commands/run-program.js';
import { MemoryStream } from '../support/context.js';

const noContext = (): Context => {
  throw new Error('no command runs in these tests');
};

/** `svc ARGS` against the tree built for ARGS (lazy) or the whole tree, stopping before a handler. */
async function answer(args: string[], lazy: boolean) {
  const stdout = new MemoryStream();
  const stderr = new MemoryStream();
  const program = buildProgram('0.0.0-test', noContext, { stdout, stderr }, lazy ? args : undefined);
  const subcommands = program.commands.reduce((n, c) => n + c.commands.length, 0);
  const options = program.commands.reduce((n, c) => n + c.options.length, 0);
  const code = await runProgram(program, args, { stderr, context: () => undefined });
  return { code, stdout: stdout.text, stderr: stderr.text, commands: program.commands.map((c) => c.name()), subcommands, options };
}

describe('the invoked command group alone', () => {
  test('each register function adds exactly the top-level commands its row names', () => {
    for (const [register, names] of groupsForTest()) {
      const program = new Command('svc');
      register(program, noContext, 'whole');
      const added = program.commands.flatMap((c) => [c.name(), ...c.aliases()]).sort();
      // An empty row is help and completion: they walk the whole tree, so they are never built alone.
      expect(added).toEqual(names.length === 0 ? ['completion', 'help'] : [...names].sort());
    }
  });

  test.each([
    [['config', 'get', '--help'], ['config']],
    [['--json', 'config', 'get', '--help'], ['config']],
    [['--base-url', 'http://127.0.0.1:1', '--max-wait=1s', 'items', 'list', '--help'], ['items']],
    [
      ['run-scope', '--help'],
      ['next', 'run', 'run_scope', 'batch', 'auto', 'fix', 'continue', 'review'],
    ],
  ])('svc %j builds %j', async (args, commands) => {
    expect((await answer(args, true)).commands).toEqual(commands);
  });

  test.each([
    [['auto', '--per-run', '1', '--dry-run'], 'auto'],
    [['--json', 'run', 'PROJ-1', '--help'], 'run'],
    [['run-scope', '--help'], 'run_scope'],
  ])('svc %j builds %s with every flag and the other dispatch commands as the root help has them', async (args, name) => {
    const stdout = new MemoryStream();
    const stderr = new MemoryStream();
    const lazy = buildProgram('0.0.0-test', noContext, { stdout, stderr }, args);
    const whole = buildProgram('0.0.0-test', noContext, { stdout, stderr });
    const flags = (program: Command, n: string) => program.commands.find((c) => c.name() === n)!.options.map((o) => o.flags);
    expect(flags(lazy, name)).toEqual(flags(whole, name));
    expect(flags(lazy, name).length).toBeGreaterThan(20);
    for (const other of ['next', 'run', 'run_scope', 'batch', 'auto', 'fix', 'continue', 'review'].filter((n) => n !== name)) {
      expect(flags(lazy, other)).toHaveLength(1);
    }
  });

  test.each([[['--help']], [['-h']], [[]], [['--json', '--max-wait', '1s', '--help']], [['--base-url=http://127.0.0.1:1', '-h']], [['--max-wait']]])(
    'svc %j (the root help, or a usage error of a global flag) builds every top-level command and no subcommand',
    async (args) => {
      const [lazy, whole] = [await answer(args, true), await answer(args, false)];
      expect(lazy.commands).toEqual(whole.commands);
      expect(lazy.subcommands).toBe(0);
      expect(whole.subcommands).toBeGreaterThan(0);
      expect(lazy.stdout + lazy.stderr).not.toBe('');
      // The dispatch commands carry one flag each there, enough for their `[options]`.
      expect(lazy.options).toBeLessThan(whole.options - 7 * 8);
      expect({ ...lazy, subcommands: 0, options: 0 }).toEqual({ ...whole, subcommands: 0, options: 0 });
    },
  );

  test.each([
    [['help', 'config']],
    [['completion', 'bash']],
    [['confg']],
    [['--bogus', 'config', 'get']],
    [['--max-wait', 'config', 'get']],
    [['-h', 'config']],
    [['--help', 'run']],
  ])('svc %j builds the whole tree', async (args) => {
    const [lazy, whole] = [await answer(args, true), await answer(args, false)];
    expect(lazy.commands.length).toBe(whole.commands.length);
    expect(lazy.subcommands).toBe(whole.subcommands);
  });

  test.each([
    [['config', '--help']],
    [['config', 'get', '--help']],
    [['config', 'gte']],
    [['config', 'get']],
    [['items', 'list', '--bogus']],
    [['run', '--help']],
    [['run_scope', '--help']],
    [['auto', '--per-rn', '1']],
    [['auto', 'extra']],
    [['review']],
    [['runs', 'shwo']],
    [['--json', 'worktrees', '--help']],
    [['--max-wait', '1s', 'items']],
    [['confg', 'get']],
    [['-h', 'config']],
    [['--version']],
  ])('svc %j answers as with the whole tree', async (args) => {
    const [lazy, whole] = [await answer(args, true), await answer(args, false)];
    expect(lazy.stdout + lazy.stderr).not.toBe('');
    expect(lazy).toEqual({ ...whole, commands: lazy.commands, subcommands: lazy.subcommands, options: lazy.options });
  });
});
