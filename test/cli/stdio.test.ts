// svc's stdout and stderr as a user meets them (src/ui/stdio.ts, cli.ts): a line is written
// straight to the descriptor, and a write that fails is one line and exit 1, never a stack trace; a
// command that runs long writes through Node's streams, which never block the event loop, so its
// heartbeats and requests go on while a reader stops reading.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { BIN, isolatedEnv, makeRepo } from '../support/cli.js';
import { startServerProcess } from '../support/server-process.js';

test('a full disk under stdout is one line on stderr and exit 1', async () => {
  const full = openSync('/dev/full', 'w');
  const child = spawn(process.execPath, [BIN, 'config', 'get', 'project', '--json'], { env: isolatedEnv(), stdio: ['ignore', full, 'pipe'] });
  closeSync(full);
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const [code] = await once(child, 'close');
  expect(stderr).toBe('svc: ENOSPC: no space left on device, write\n');
  expect(code).toBe(1);
});

// Node's stream for a pipe makes the descriptor non-blocking (libuv), and /proc shows it.

const O_NONBLOCK = 0o4000;
const flags = (pid: number, fd: number) => Number.parseInt(/^flags:\s*(\d+)/m.exec(readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8'))![1]!, 8);

test.runIf(process.platform === 'linux')("svc server's stdout and stderr are Node's non-blocking streams once it serves", async () => {
  const server = await startServerProcess();
  try {
    const pid = server.child.pid!;
    expect(flags(pid, 1) & O_NONBLOCK).toBe(O_NONBLOCK);
    expect(flags(pid, 2) & O_NONBLOCK).toBe(O_NONBLOCK);
  } finally {
    await server.stop();
  }
});

// The run asks for Node's streams as it takes the signals; a library it loads may make them earlier
// (debug, under simple-git, reads process.stderr): either way, none of its writes can block.
test.runIf(process.platform === 'linux')("a dispatch run's stdout and stderr are Node's non-blocking streams while its agent runs", async () => {
  const server = await startServerProcess();
  const marker = join(mkdtempSync(join(tmpdir(), 'svc-stdio-')), 'agent-started');
  const run = spawn(
    process.execPath,
    [BIN, 'run', 'DEMO-1', '--agent-cmd', `sh -c "touch '${marker}'; exec sleep 30"`, '--agent-user', 'none', '--allow-empty', '--repo', await makeRepo()],
    { env: isolatedEnv({ SVC_BASE_URL: server.url, SVC_TOKEN: server.token, SVC_PROJECT: 'DEMO' }), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  run.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  run.stdout!.resume();
  try {
    for (let waited = 0; !existsSync(marker); waited += 50) {
      if (waited > 10_000 || run.exitCode !== null) throw new Error(`the agent never started: ${stderr}`);
      await new Promise((done) => setTimeout(done, 50));
    }
    expect(flags(run.pid!, 1) & O_NONBLOCK).toBe(O_NONBLOCK);
    expect(flags(run.pid!, 2) & O_NONBLOCK).toBe(O_NONBLOCK);
  } finally {
    const ended = once(run, 'close');
    run.kill('SIGINT');
    await ended;
    await server.stop();
  }
});
