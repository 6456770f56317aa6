// A real terminal for tests: a detached tmux session on a private socket, 120×40 unless told. The
// command waits for a go-file so `pipe-pane` records every byte it writes from the first one; the
// screen is read with `capture-pane`, as a person would see it.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { BIN } from '../support/cli.js';

const tmux = (args: string[]) =>
  new Promise<string>((ok, fail) =>
    execFile('tmux', args, (error, stdout, stderr) => (error ? fail(new Error(`tmux ${args.join(' ')}: ${stderr || error.message}`)) : ok(stdout))),
  );

/**
 * Fails loudly when tmux is not on PATH: a skipped terminal test reads as green while proving
 * nothing, so the suite needs tmux (`.ci/run` installs Debian's package; so can a developer).
 */
export function requireTmux(): void {
  const found = (process.env.PATH ?? '').split(':').some((dir) => dir && existsSync(join(dir, 'tmux')));
  if (!found) throw new Error('the real-terminal tests need tmux on PATH (Debian: apt-get install tmux)');
}

export interface Terminal {
  /** The screen now, without escapes; trailing blank lines dropped. */
  screen(): Promise<string>;
  /** Every byte the command wrote to the terminal so far (escapes included). */
  raw(): string;
  /** Polls the screen until `test` holds; fails with the last screen after `timeoutMs`. */
  waitFor(test: (screen: string) => boolean, timeoutMs?: number): Promise<string>;
  /** Waits for the command to end and returns its exit code (the screen is kept until close). */
  exited(timeoutMs?: number): Promise<number>;
  close(): Promise<void>;
}

const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * Written after the command ends, before its exit code: a window title (OSC 2), which no screen
 * shows. `pipe-pane` copies bytes in order, so once the recording holds it, it holds every byte the
 * command wrote. raw() leaves it out.
 */
const END = '\x1b]2;svc-test-end\x07';

/**
 * Runs `svc ARGS` on a fresh terminal. `env` is the whole environment of the command (TERM is set to
 * xterm-256color unless given); nothing is inherited from the tmux server.
 */
export async function openTerminal(
  args: string[],
  opts: { env: Record<string, string | undefined>; cwd: string; width?: number; height?: number },
): Promise<Terminal> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-tty-'));
  const socket = join(dir, 'tmux.sock');
  const go = join(dir, 'go');
  const rawFile = join(dir, 'raw.log');
  const exitFile = join(dir, 'exit');
  const env = { TERM: 'xterm-256color', ...opts.env };
  const exports = Object.entries(env)
    .filter(([k, v]) => v !== undefined && /^[A-Za-z_][A-Za-z0-9_]*$/.test(k))
    .map(([k, v]) => `export ${k}=${q(v!)}`);
  const script = join(dir, 'run.sh');
  writeFileSync(
    script,
    [
      ...exports,
      `while [ ! -e ${q(go)} ]; do sleep 0.02; done`,
      `cd ${q(opts.cwd)}`,
      `${q(process.execPath)} ${q(BIN)} ${args.map(q).join(' ')}`,
      'code=$?',
      `printf '\\033]2;svc-test-end\\007'`,
      `echo $code > ${q(exitFile)}.tmp && mv ${q(exitFile)}.tmp ${q(exitFile)}`,
      'sleep 600',
    ].join('\n'),
  );
  const session = 'svc';
  // env -i: the command's environment is exactly `env`, not the test runner's.
  await tmux([
    '-S',
    socket,
    '-f',
    '/dev/null',
    'new-session',
    '-d',
    '-s',
    session,
    '-x',
    String(opts.width ?? 120),
    '-y',
    String(opts.height ?? 40),
    `env -i bash --noprofile --norc ${q(script)}`,
  ]);
  await tmux(['-S', socket, 'pipe-pane', '-t', session, '-o', `cat >> ${q(rawFile)}`]);
  writeFileSync(go, '');

  const screen = async () => (await tmux(['-S', socket, 'capture-pane', '-p', '-t', session])).replace(/\s+$/, '');
  const recorded = () => (existsSync(rawFile) ? readFileSync(rawFile, 'utf8') : '');
  return {
    screen,
    raw: () => recorded().replace(END, ''),
    async waitFor(test, timeoutMs = 20_000) {
      const until = Date.now() + timeoutMs;
      let last = '';
      while (Date.now() < until) {
        last = await screen();
        if (test(last)) return last;
        await sleep(50);
      }
      throw new Error(`the terminal never showed what was expected; last screen:\n${last}`);
    },
    async exited(timeoutMs = 30_000) {
      const until = Date.now() + timeoutMs;
      while (Date.now() < until) {
        // pipe-pane copies asynchronously: the end mark in the recording says it has caught up.
        if (existsSync(exitFile) && recorded().includes(END)) return Number(readFileSync(exitFile, 'utf8').trim());
        await sleep(50);
      }
      throw new Error(`the command did not end (or the recording never caught up with it); last screen:\n${await screen()}`);
    },
    async close() {
      await tmux(['-S', socket, 'kill-server']).catch(() => undefined);
    },
  };
}
