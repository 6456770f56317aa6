// svc at the left of a shell pipe: a reader that stops early is no error, and help reads down the
// command tree (`svc help items list | less`).
import { describe, expect, test } from 'vitest';
import { BIN, isolatedEnv } from '../support/cli.js';
import { execFile } from 'node:child_process';

/** Runs `svc ARGS | READER` in bash; returns svc's exit code (PIPESTATUS) and its stderr. */
function piped(args: string[], reader: string): Promise<{ code: number; stderr: string; stdout: string }> {
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const script = `${q(process.execPath)} ${q(BIN)} ${args.map(q).join(' ')} 2>"$ERR" | ${reader}; echo "svc exit $\{PIPESTATUS[0]}"; cat "$ERR"; rm -f "$ERR"`;
  return new Promise((done, fail) =>
    execFile('bash', ['-c', `ERR=$(mktemp); ${script}`], { env: isolatedEnv() }, (error, stdout) => {
      if (error) return fail(error);
      const m = stdout.match(/svc exit (\d+)\n([\s\S]*)$/);
      if (!m) return fail(new Error(stdout));
      done({ code: Number(m[1]), stderr: m[2]!, stdout: stdout.slice(0, m.index) });
    }),
  );
}

// Every case is its own pipeline: side by side.
describe.concurrent('a reader that goes away', () => {
  test.each([
    [['help', 'exit-codes'], 'true'],
    [['help', 'exit-codes'], 'head -1'],
    [['completion', 'zsh'], 'head -c 10'],
    [['help'], 'true'],
  ])('svc %j | %s: exit 0, nothing on stderr', async (args, reader) => {
    const r = await piped(args, reader);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });
});

describe.concurrent('svc help', () => {
  test('reads down the tree: svc help items list is svc items list --help', async () => {
    const r = await piped(['help', 'items', 'list'], 'cat');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Usage: svc items list \[options\]/);
    expect(r.stdout).toMatch(/--filter <expr>/);
  });

  test('an unknown topic is one line, exit 2', async () => {
    const r = await piped(['help', 'items', 'frob'], 'cat');
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("svc: unknown help topic 'items frob'; try `svc help exit-codes` or `svc --help`\n");
  });
});
