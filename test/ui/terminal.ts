// A real terminal for tests, from npm alone: svc runs on a pseudo-terminal (@lydell/node-pty, its
// prebuilt binary, so nothing compiles at install), 120×40 unless told, and what it writes there is
// fed to a headless terminal emulator (@xterm/headless), whose screen is what a person would see
// after every redraw. So `npm test` needs no tmux (CONTRIBUTING.md, "The suites").
import { spawn as spawnPty } from '@lydell/node-pty';
import xterm from '@xterm/headless';
import { setTimeout as sleep } from 'node:timers/promises';
import { BIN } from '../support/cli.js';

export interface Terminal {
  /** The screen now, without escapes; trailing blank lines dropped. */
  screen(): Promise<string>;
  /** Every byte the command wrote to the terminal so far (escapes included). */
  raw(): string;
  /**
   * The controls the emulator obeyed that an agent must not reach (docs/dispatch.md, `svc logs`):
   * `OSC 0` and `OSC 2` (the window title), `OSC 8` (a link), `OSC 52` (the clipboard), `CSI 2J`
   * and `CSI 3J` (a cleared screen or scrollback), in order.
   */
  obeyed(): string[];
  /** Polls the screen until `test` holds; fails with the last screen after `timeoutMs`. */
  waitFor(test: (screen: string) => boolean, timeoutMs?: number): Promise<string>;
  /** Waits for the command to end and returns its exit code (the screen is kept until close). */
  exited(timeoutMs?: number): Promise<number>;
  close(): Promise<void>;
}

/** The visible rows of the emulator, each without its trailing blanks, as tmux's capture-pane gave them. */
function visibleRows(term: xterm.Terminal): string {
  const buffer = term.buffer.active;
  const rows: string[] = [];
  for (let y = buffer.baseY; y < buffer.baseY + term.rows; y++) rows.push(buffer.getLine(y)?.translateToString(true) ?? '');
  return rows.join('\n').replace(/\s+$/, '');
}

/**
 * Runs `svc ARGS` on a fresh terminal. `env` is the whole environment of the command (TERM is set to
 * xterm-256color unless given); nothing is inherited from the test runner.
 */
export async function openTerminal(
  args: string[],
  opts: { env: Record<string, string | undefined>; cwd: string; width?: number; height?: number },
): Promise<Terminal> {
  const cols = opts.width ?? 120;
  const rows = opts.height ?? 40;
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries({ TERM: 'xterm-256color', ...opts.env })) if (v !== undefined) env[k] = v;
  // The screen's rows (`buffer`) and the parser's hooks are "proposed" API in @xterm/headless.
  const term = new xterm.Terminal({ cols, rows, allowProposedApi: true, scrollback: 1000 });
  let recorded = '';
  const obeyed: string[] = [];
  // Each handler notes the control and returns false, so the emulator still obeys it as xterm does.
  const saw = (control: string) => {
    obeyed.push(control);
    return false;
  };
  for (const id of [0, 2, 8, 52]) term.parser.registerOscHandler(id, () => saw(`OSC ${id}`));
  term.parser.registerCsiHandler({ final: 'J' }, ([mode]) => (mode === 2 || mode === 3) && saw(`CSI ${mode}J`));
  // Handlers are attached before the first read of the master side, so no byte is missed.
  const pty = spawnPty(process.execPath, [BIN, ...args], { name: env.TERM, cols, rows, cwd: opts.cwd, env });
  pty.onData((data) => {
    recorded += data;
    term.write(data);
  });
  // What the emulator answers (a cursor-position or device query) goes back as a terminal would.
  term.onData((data) => pty.write(data));
  // node-pty reports the exit once the master side is drained, so `recorded` then holds every byte.
  let code: number | undefined;
  const ended = new Promise<void>((done) =>
    pty.onExit((e) => {
      code = e.signal ? 128 + e.signal : e.exitCode;
      done();
    }),
  );
  /** The emulator parses what it is given on a later tick: this resolves once it has parsed it all. */
  const parsed = () => new Promise<void>((done) => term.write('', done));
  const screen = async () => {
    await parsed();
    return visibleRows(term);
  };
  return {
    screen,
    raw: () => recorded,
    obeyed: () => [...obeyed],
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
      const timer = sleep(timeoutMs, undefined, { ref: false }).then(() => 'late' as const);
      if ((await Promise.race([ended, timer])) === 'late') throw new Error(`the command did not end; last screen:\n${await screen()}`);
      await parsed();
      return code!;
    },
    async close() {
      if (code === undefined) pty.kill('SIGKILL');
      term.dispose();
    },
  };
}
