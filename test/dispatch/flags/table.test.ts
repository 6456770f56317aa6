// The dispatch flags' rows (src/dispatch/flags/table.ts) are the one place a flag of the run is
// written: the options' types come from them (checked by `npm run typecheck` through the type
// assertions), and so do the defaults, run.json's record and `continue`'s replay, and `--hosted`'s
// refusals. These tests try each promise on every row, so a row added later is tried too.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, expectTypeOf, test } from 'vitest';
import { CONFIG_KEYS } from '../../../src/commands/config/store.js';
import { defaultDispatchOptions, fillOptions, hostedRefusal, readFlagOptions, recordFlagOptions, replayFlags } from '../../../src/dispatch/flags/fill.js';
import { attributeOf, longOf } from '../../../src/dispatch/flags/row.js';
import { DISPATCH_FLAGS, type DispatchFlags, type FlagOptions, type ReplayedOptions } from '../../../src/dispatch/flags/table.js';
import type { DispatchOptions } from '../../../src/dispatch/options.js';

type Row = (typeof DISPATCH_FLAGS)[number] & { to?: string; byDefault?: unknown; replay?: true; optional?: true; hosted?: unknown; orNull?: true };
const ROWS = DISPATCH_FLAGS as readonly Row[];

/** A value of each row's flag unlike its default, as commander would give it. */
function typedValue(row: Row): unknown {
  if (/^--no-/.test(longOf(row))) return false;
  if (!row.flags.includes('<')) return true;
  if ('choices' in row && row.choices) return row.choices.find((c) => c !== row.byDefault);
  if ('parse' in row && row.parse) return ['A_NAME'];
  if (row.to?.startsWith('timeouts.') || row.to === 'heartbeatIntervalMs') return '7s';
  return '3';
}

describe('the dispatch flags table', () => {
  test('the options the rows fill have the types the engine reads', () => {
    // The fields of the options before the table had them, each its type then (a flag added since adds its own).
    type Before = {
      agentEnv?: string[];
      dryRun: boolean;
      maxCards?: number | null;
      onFailure: 'halt' | 'continue';
      parallel: number;
      idempotencyKey?: string;
      heartbeatIntervalMs: number;
      sendLogs: boolean;
      allowEmpty: boolean;
      maxCostUsd?: number | null;
      worktree: boolean;
      pushAttempts?: boolean;
      allAttempts?: boolean;
      rerun?: boolean;
      retryFailed?: boolean;
      perRun?: number;
      timeouts: { runMs: number | null; idleMs: number; cardMs: number; killGraceMs: number };
    };
    expectTypeOf<Pick<FlagOptions, keyof Before>>().toEqualTypeOf<Before>();
    // run.json writes a null where the option is absent: maxCostUsd is always there.
    type Recorded = {
      agentEnv?: string[];
      onFailure: 'halt' | 'continue';
      parallel: number;
      sendLogs: boolean;
      allowEmpty: boolean;
      maxCostUsd: number | null;
      worktree: boolean;
      pushAttempts?: boolean;
      allAttempts?: boolean;
      timeouts: { runMs: number | null; idleMs: number; cardMs: number; killGraceMs: number };
    };
    expectTypeOf<Pick<ReplayedOptions, keyof Recorded>>().toEqualTypeOf<Recorded>();
    expectTypeOf<DispatchOptions['parallel']>().toEqualTypeOf<number>();
    expectTypeOf<DispatchOptions['timeouts']['flushMs']>().toEqualTypeOf<number | undefined>();
  });

  test('with nothing given every option that is not optional has a value, its default where the row names one', () => {
    const defaults = defaultDispatchOptions() as Record<string, unknown>;
    for (const row of ROWS.filter((r) => r.to && !r.optional)) {
      const [top, inner] = row.to!.split('.') as [string, string | undefined];
      const value = inner ? (defaults[top] as Record<string, unknown>)[inner] : defaults[top];
      expect(value, row.flags).not.toBeUndefined();
    }
    expect(defaultDispatchOptions()).toMatchObject({ onFailure: 'halt', parallel: 1, sendLogs: false, heartbeatIntervalMs: 60_000, worktree: true });
    expect(defaultDispatchOptions().timeouts).toEqual({ idleMs: 900_000, cardMs: 3_600_000, killGraceMs: 10_000, runMs: null });
  });

  test("a row's help line says its default", () => {
    for (const row of ROWS.filter((r) => r.byDefault !== undefined && typeof r.byDefault === 'string')) expect(row.help).toContain(`default ${row.byDefault}`);
  });

  test('each flag continue replays comes back, through run.json, as the same option', () => {
    for (const row of ROWS.filter((r) => r.replay)) {
      const flags = { [attributeOf(row)]: typedValue(row) } as Partial<DispatchFlags>;
      const opts = fillOptions(DISPATCH_FLAGS, flags);
      expect(opts, row.flags).not.toEqual(defaultDispatchOptions());
      const read = readFlagOptions(JSON.parse(JSON.stringify(recordFlagOptions(opts))));
      const again = fillOptions(
        DISPATCH_FLAGS,
        replayFlags(read, () => false),
      );
      expect(again, row.flags).toEqual(opts);
      // A flag given now wins over the recorded one.
      expect(
        replayFlags(read, (key) => key === attributeOf(row)),
        row.flags,
      ).not.toHaveProperty(attributeOf(row));
    }
  });

  test('a bad value of a flag that fills an option is one line naming the flag', () => {
    for (const [flags, line] of [
      [{ parallel: 'two' }, "--parallel takes a whole number of at least 1, got 'two'"],
      [{ maxCost: '-1' }, "--max-cost takes an amount in USD above 0, got '-1'"],
      [{ idleTimeout: 'soon' }, 'invalid duration "soon" for --idle-timeout'],
      [{ agentEnv: ['SVC_TOKEN'] }, '--agent-env SVC_TOKEN: SVC_TOKEN never reaches an agent'],
    ] as const)
      expect(() => fillOptions(DISPATCH_FLAGS, flags as Partial<DispatchFlags>)).toThrow(line);
    expect(() => fillOptions(DISPATCH_FLAGS, {}, { env: { SVC_HEARTBEAT_INTERVAL: 'often' }, config: () => undefined })).toThrow(
      'invalid duration "often" for SVC_HEARTBEAT_INTERVAL',
    );
  });

  test('a flag beats its variable, which beats the stored config, which beats the default; a command without the flag takes the default', () => {
    const sources = { env: { SVC_HEARTBEAT_INTERVAL: '5s' }, config: (key: string) => ({ parallel: 4, sendLogs: true })[key] };
    expect(fillOptions(DISPATCH_FLAGS, { heartbeatInterval: '2s', parallel: '2' }, sources)).toMatchObject({
      heartbeatIntervalMs: 2_000,
      parallel: 2,
      sendLogs: true,
    });
    expect(fillOptions(DISPATCH_FLAGS, {}, sources)).toMatchObject({ heartbeatIntervalMs: 5_000, parallel: 4 });
    const parallelOnly = DISPATCH_FLAGS.filter((r) => r.flags === '--parallel <n>');
    expect(fillOptions(parallelOnly, { parallel: '2', heartbeatInterval: '2s' }, sources)).toMatchObject({ parallel: 2, heartbeatIntervalMs: 60_000 });
  });

  test("a row's stored config key is one `svc config set` takes, of the same type", () => {
    const stored = ROWS.filter((r): r is Row & { config: string } => 'config' in r && typeof r.config === 'string');
    expect(stored.map((r) => r.config)).toEqual(['parallel', 'sendLogs']);
    for (const row of stored) {
      const key = row.config as keyof typeof CONFIG_KEYS;
      expect(Object.keys(CONFIG_KEYS), row.flags).toContain(key);
      const value = CONFIG_KEYS[key].parse(row.config === 'sendLogs' ? 'true' : '4');
      expect(fillOptions([row], {}, { env: {}, config: (k) => (k === key ? value : undefined) })).not.toEqual(defaultDispatchOptions());
    }
  });

  test('--hosted refuses each flag whose row says so, naming it as typed', () => {
    for (const row of ROWS.filter((r) => r.hosted)) {
      const value = row.flags.startsWith('--agent ') || row.flags.startsWith('--model ') ? ['a', 'b'] : typedValue(row);
      const refused = hostedRefusal({ [attributeOf(row)]: value } as Partial<DispatchFlags>);
      expect(refused?.name, row.flags).toContain(longOf(row));
      expect(refused?.where, row.flags).toMatch(/\w/);
    }
    // What travels is not refused: one agent and model, the repository, a dry run, commander's own true for a lone negation.
    expect(hostedRefusal({ agent: ['claude'], model: ['m'], repo: '.', dryRun: true, worktree: true, reconcile: true })).toBeNull();
  });

  test('every flag is in the README, as a user types it: its flag table, its configuration table or its reports', () => {
    const readme = readFileSync(resolve(import.meta.dirname, '../../../README.md'), 'utf8');
    const missing = ROWS.map(longOf).filter((long) => !new RegExp(`\`${long}[\` |]`).test(readme));
    expect(missing).toEqual([]);
  });

  test("docs/hosted.md's list of what continue takes from run.json names every flag whose row says replay", () => {
    const doc = readFileSync(resolve(import.meta.dirname, '../../../docs/hosted.md'), 'utf8');
    const section = doc.slice(doc.indexOf('## `continue RUN_ID`'), doc.indexOf('\n## ', doc.indexOf('## `continue RUN_ID`') + 1));
    const missing = ROWS.filter((r) => r.replay)
      .map(longOf)
      .filter((long) => !section.includes(`\`${long}\``));
    expect(missing).toEqual([]);
  });

  test("docs/hosted.md's table of what --hosted refuses names every flag whose row says hosted", () => {
    const doc = readFileSync(resolve(import.meta.dirname, '../../../docs/hosted.md'), 'utf8');
    const table = doc.slice(doc.indexOf('| flag given with `--hosted` |'), doc.indexOf('For example `svc run KEY --hosted'));
    const missing = ROWS.filter((r) => r.hosted)
      .map(longOf)
      .filter((long) => !table.includes(`\`${long}\``));
    expect(missing).toEqual([]);
  });
});
