// An in-process Context for command tests: in-memory streams whose TTY flag can be switched, a
// config folder of its own, and a controllable interruption signal.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clearLine, cursorTo, moveCursor } from 'node:readline';
import { PassThrough, Writable } from 'node:stream';
import { openConfig, type ConfigStore } from '../../src/commands/config/store.js';
import type { Context, GlobalOptions } from '../../src/commands/context.js';
import type { OutStream } from '../../src/ui/output.js';
import { testOutput } from './output.js';

export class MemoryStream extends Writable implements OutStream {
  text = '';
  constructor(
    public isTTY = false,
    public columns = 100,
  ) {
    super();
  }
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void) {
    this.text += chunk.toString('utf8');
    done();
  }
}

/**
 * An in-memory terminal of the given width. ora moves the cursor through these methods; like a real
 * tty.WriteStream's they write the escape codes, so a test can count what was drawn.
 */
export class TtyStream extends MemoryStream {
  constructor(columns = 100) {
    super(true, columns);
  }
  cursorTo(x: number) {
    return cursorTo(this, x);
  }
  moveCursor(dx: number, dy: number) {
    return moveCursor(this, dx, dy);
  }
  clearLine(dir: -1 | 0 | 1) {
    return clearLine(this, dir);
  }
}

export interface TestContext extends Context {
  stdout: MemoryStream;
  stderr: MemoryStream;
  abort: AbortController;
}

export function testContext(
  opts: {
    globals?: GlobalOptions;
    env?: Record<string, string | undefined>;
    tty?: boolean;
    stdin?: string;
    cwd?: string;
    exactEnv?: boolean;
    streams?: { stdout: MemoryStream; stderr: MemoryStream };
  } = {},
): TestContext {
  const stdout = opts.streams?.stdout ?? new MemoryStream(opts.tty);
  const stderr = opts.streams?.stderr ?? new MemoryStream(opts.tty);
  // SVC_AGENT_USER=none: as root (CI) the tests' agents keep svc's user unless a test asks otherwise.
  // exactEnv: the environment as given (a spawned svc's), without a config folder of its own.
  const env = opts.exactEnv ? { ...opts.env } : { SVC_CONFIG_DIR: mkdtempSync(join(tmpdir(), 'svc-cfg-')), SVC_AGENT_USER: 'none', ...opts.env };
  const globals = opts.globals ?? {};
  const stdin = new PassThrough();
  stdin.end(opts.stdin ?? '');
  const abort = new AbortController();
  let config: ConfigStore | undefined;
  return {
    stdin,
    stdout,
    stderr,
    env,
    cwd: opts.cwd ?? process.cwd(),
    globals,
    out: testOutput({ stdout, stderr, env, json: globals.json, jq: globals.jq, color: globals.color, verbose: globals.verbose }),
    config: () => (config ??= openConfig(env)),
    interrupts: { signal: abort.signal, reason: () => (abort.signal.aborted ? (abort.signal.reason as 'SIGINT') : null) },
    exitCode: 0,
    self: { execPath: process.execPath, script: join(import.meta.dirname, '../../bin/svc.js') },
    version: '0.0.0-test',
    abort,
  };
}
