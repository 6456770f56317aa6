// Each flag is declared once (src/commands/flag-table.ts): the type of the parsed flags comes from
// the same rows commander gets. The type assertions here are checked by `npm run typecheck`, and
// the expected errors below are the promise that a renamed flag no longer compiles where it is read.
import { Command } from 'commander';
import { describe, expect, expectTypeOf, test } from 'vitest';
import type { DispatchFlags } from '../../src/commands/dispatch/flags.js';
import { addFlags, type AttributeOf, flag, type FlagsOf, flagsOf } from '../../src/commands/flag-table.js';
import type { HostedRunFlags } from '../../src/commands/hosted/run.js';
import { buildProgram } from '../../src/commands/program.js';

const collect = (value: string, previous: string[] = []) => [...previous, value];

const TABLE = [
  flag('-p, --project <key>', 'project'),
  flag('--dry-run', 'look only'),
  flag('--on-failure <mode>', 'halt or continue', { choices: ['halt', 'continue'] }),
  flag('--report <format:file>', 'repeatable', { parse: collect }),
  flag('--port <port>', 'a number', { parse: (v: string) => Number(v), default: 8787 }),
  flag('--workspace <slug>', 'required', { required: true }),
  flag('--verify <command>', 'a check'),
  flag('--no-verify', 'no check'),
  flag('--no-worktree', 'in place'),
];

describe('flag table', () => {
  test('the property of each flag is the one commander stores it under', () => {
    expectTypeOf<AttributeOf<'-p, --project <key>'>>().toEqualTypeOf<'project'>();
    expectTypeOf<AttributeOf<'--agent-cmd <command>'>>().toEqualTypeOf<'agentCmd'>();
    expectTypeOf<AttributeOf<'--no-push'>>().toEqualTypeOf<'push'>();
    expectTypeOf<AttributeOf<'--rate-limit <n/seconds>'>>().toEqualTypeOf<'rateLimit'>();
    // Every flag of the whole tree, as commander names it: the same rule, checked at run time.
    const camel = (long: string) => long.replace(/^--(no-)?/, '').replace(/-(.)/g, (_, c: string) => c.toUpperCase());
    const all = (cmd: Command): Command[] => [cmd, ...cmd.commands.flatMap(all)];
    const options = all(buildProgram('0.0.0', () => ({}) as never)).flatMap((c) => c.options);
    expect(options.length).toBeGreaterThan(100);
    for (const o of options) expect(o.attributeName()).toBe(camel(o.long!));
  });

  test('the value type comes from the syntax, the choices or the parser; defaults and required flags are always there', () => {
    type Flags = FlagsOf<typeof TABLE>;
    expectTypeOf<Flags>().toEqualTypeOf<{
      project?: string;
      dryRun?: boolean;
      onFailure?: 'halt' | 'continue';
      report?: string[];
      verify?: string | false;
      worktree?: boolean;
      port: number;
      workspace: string;
    }>();
  });

  test('the dispatch commands and svc attach read their flags by the names the tables give', () => {
    expectTypeOf<DispatchFlags['maxCost']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<DispatchFlags['verify']>().toEqualTypeOf<string | false | undefined>();
    expectTypeOf<DispatchFlags['priority']>().toEqualTypeOf<string[] | undefined>();
    expectTypeOf<HostedRunFlags['push']>().toEqualTypeOf<boolean | undefined>();
    const renamed = [flag('--max-spend <usd>', 'renamed')];
    const flags: FlagsOf<typeof renamed> = {};
    // @ts-expect-error a flag renamed in its table is no longer read under its old name
    expect(flags.maxCost).toBeUndefined();
    // @ts-expect-error nor under a name no table declares
    expect(({} as DispatchFlags).maxCosts).toBeUndefined();
  });

  test('commander parses what the type says', () => {
    const cmd = addFlags(new Command('x').exitOverride(), TABLE);
    cmd.parse(['--workspace', 'acme', '--no-verify', '--report', 'junit:a', '--report', 'html:b', '--on-failure', 'continue'], { from: 'user' });
    expect(flagsOf(cmd, TABLE)).toEqual({ workspace: 'acme', verify: false, report: ['junit:a', 'html:b'], onFailure: 'continue', port: 8787, worktree: true });
  });

  test('reading a command with a table that lacks its flags is an error, not undefined values', () => {
    const cmd = addFlags(new Command('x'), TABLE);
    const other = [flag('--dry-run', 'look only')];
    expect(() => flagsOf(cmd, other)).toThrow(/x: flags read with a table that lacks -p, --project <key>/);
  });
});
