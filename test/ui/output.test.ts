// The output object: tables on a TTY, plain rows when piped, colour rules, one JSON document.
import { stripVTControlCharacters } from 'node:util';
import { describe, expect, test } from 'vitest';
import { Chalk } from 'chalk';
import { colorLevel, createOutput, formatTable } from '../../src/ui/output.js';
import { loadStyle, PLAIN } from '../../src/ui/style.js';
import { testOutput } from '../support/output.js';
import { MemoryStream } from '../support/context.js';

function make(opts: { tty: boolean; env?: Record<string, string>; json?: boolean; color?: boolean }) {
  const stdout = new MemoryStream(opts.tty, 40);
  const stderr = new MemoryStream(opts.tty, 40);
  return { stdout, stderr, out: testOutput({ stdout, stderr, env: opts.env ?? {}, json: opts.json, color: opts.color }) };
}

describe('output', () => {
  test('piped rows are tab-separated with no header', () => {
    const { stdout, out } = make({ tty: false });
    out.table(
      ['KEY', 'TITLE'],
      [
        ['A-1', 'first'],
        ['A-2', 'second'],
      ],
    );
    expect(stdout.text).toBe('A-1\tfirst\nA-2\tsecond\n');
  });

  test('a TTY table is aligned, has a header and is cut to the terminal width', () => {
    const { stdout, out } = make({ tty: true });
    out.table(['KEY', 'TITLE'], [['A-1', 'a title much longer than the forty columns of this terminal']]);
    const lines = stripVTControlCharacters(stdout.text).trimEnd().split('\n');
    expect(lines[0]).toMatch(/^KEY\s+TITLE$/);
    expect(lines[1]!.length).toBeLessThanOrEqual(40);
    expect(lines[1]).toMatch(/…$/);
  });

  test.each([
    ['a TTY', { isTTY: true }, {}, undefined, undefined, 1],
    ['a pipe', { isTTY: false }, {}, undefined, undefined, 0],
    ['NO_COLOR on a TTY', { isTTY: true }, { NO_COLOR: '1' }, undefined, undefined, 0],
    ['FORCE_COLOR on a pipe', { isTTY: false }, { FORCE_COLOR: '1' }, undefined, undefined, 1],
    ['--no-color', { isTTY: true }, { FORCE_COLOR: '1' }, false, undefined, 0],
    ['--json', { isTTY: true }, {}, undefined, true, 0],
  ])('colour on %s', (_n, stream, env, color, json, level) => {
    const s = new MemoryStream(stream.isTTY);
    expect(colorLevel({ stdout: s, stderr: s, env, color, json }, s)).toBe(level);
  });

  test('no spinner when piped, in CI or with --json: the text goes out as a plain line', async () => {
    for (const o of [{ tty: false }, { tty: true, env: { CI: 'true' } }, { tty: true, json: true }]) {
      const { stderr, out } = make(o);
      const s = await out.spinner('working');
      s.succeed('done');
      expect(stderr.text).toBe('working\ndone\n');
    }
  });

  test('data goes to stdout, messages to stderr', () => {
    const { stdout, stderr, out } = make({ tty: false });
    out.document({ a: 1 });
    out.info('hello');
    expect(JSON.parse(stdout.text)).toEqual({ a: 1 });
    expect(stderr.text).toBe('hello\n');
  });
});

describe('formatTable on an 80-column terminal', () => {
  // The shape of `svc runs list` before it was made narrower: 125-130 characters a row.
  const head = ['RUN', 'COMMAND', 'CARDS', 'STATUS', 'STARTED', 'WHERE'];
  const rows = [
    [
      'run_5kAd2jdCZ4XUMnA3',
      'run_scope',
      '12 (10 ok, 1 failed, 1 skipped)',
      'failed (halted)',
      '2026-11-27T14:24:25.393Z',
      'local /home/someone/src/a-rather-long-repository-name',
    ],
    ['run_BOlHXmrzlJ8abvXJ', 'review', '1 (0 ok, 0 failed, 1 skipped)', 'succeeded (completed)', '2026-11-27T14:24:25.171Z', 'hosted'],
  ];
  test('every row fits: the last column gives way first, then the widest others; the first stays whole', () => {
    const lines = formatTable(head, rows, 80, new Chalk({ level: 0 }))
      .trimEnd()
      .split('\n');
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(80);
    expect(lines[1]).toMatch(/^run_5kAd2jdCZ4XUMnA3 {2}/);
    expect(lines[1]).toContain('…');
  });

  test('a table that fits is left as it is', () => {
    const text = formatTable(['A', 'B'], [['x', 'yy']], 80, new Chalk({ level: 0 }));
    expect(text).toBe('A  B\nx  yy\n');
  });
});

describe('styles (ui/style.ts)', () => {
  test('colour off: the plain styles return the text as it is; colour on: chalk at that level', async () => {
    const plain = await loadStyle(0);
    expect(plain).toBe(PLAIN);
    expect([plain.bold('a'), plain.red('b'), plain.dim('c')]).toEqual(['a', 'b', 'c']);
    const coloured = await loadStyle(1);
    expect(coloured.level).toBe(1);
    expect(coloured.red('b')).toBe('\x1b[31mb\x1b[39m');
  });

  test('an output given styles of another level than its own is refused, not drawn in the wrong colours', async () => {
    const stdout = new MemoryStream(true, 40);
    const stderr = new MemoryStream(true, 40);
    const chalk = await loadStyle(1);
    expect(() => createOutput({ stdout, stderr, env: {} })).toThrow(/colour level 1 given styles of level 0/);
    expect(() => createOutput({ stdout, stderr, env: { NO_COLOR: '1' }, style: chalk })).toThrow(/colour level 0 given styles of level 1/);
    expect(createOutput({ stdout, stderr, env: {}, style: chalk }).style.level).toBe(1);
  });
});
