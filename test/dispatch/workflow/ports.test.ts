// Ports per leg (src/dispatch/workflow/ports.ts): distinct within a process, distinct from another
// svc process's (its lock is an abstract socket the kernel drops when that process ends), and never
// one another program listens on.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { afterEach, describe, expect, test } from 'vitest';
import { reservePorts } from '../../../src/dispatch/workflow/ports.js';

// A range of its own per test file run, away from the default one (legs of other tests) and below
// the kernel's ephemeral ports (32768 and up), which any connection may take.
const base = 12_000 + (process.pid % 200) * 20;
const range = { first: base, end: base + 20 };
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
});

/** Another process holding svc's lock of `port`, as a second svc would. */
async function otherSvcHolding(port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['-e', `require('node:net').createServer().listen('\\0svc-port-${port}', () => console.log('held'))`], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  await new Promise<void>((done) => child.stdout!.once('data', () => done()));
  return child;
}

describe.skipIf(process.platform !== 'linux')('reservePorts', () => {
  test('two blocks at once in one process do not overlap; a released block is handed out again', async () => {
    const [a, b] = await Promise.all([reservePorts(3, range), reservePorts(3, range)]);
    expect(new Set([a!.first, a!.first + 1, a!.first + 2, b!.first, b!.first + 1, b!.first + 2]).size).toBe(6);
    const first = Math.min(a!.first, b!.first);
    (a!.first === first ? a! : b!).release();
    const again = await reservePorts(3, range);
    expect(again.first).toBe(first);
    again.release();
    (a!.first === first ? b! : a!).release();
  });

  test('a port another svc process holds is passed over, and free again once that process is gone', async () => {
    const other = await otherSvcHolding(range.first);
    const block = await reservePorts(1, range);
    expect(block.first).toBe(range.first + 1);
    block.release();
    other.kill('SIGKILL');
    await new Promise((done) => other.once('exit', done));
    const after = await reservePorts(1, range);
    expect(after.first).toBe(range.first);
    after.release();
  });

  test('a port some other program listens on is passed over', async () => {
    const server = createServer();
    await new Promise<void>((done) => server.listen(range.first, '127.0.0.1', done));
    try {
      const block = await reservePorts(2, range);
      expect(block.first).toBe(range.first + 2);
      block.release();
    } finally {
      server.close();
    }
  });

  test('a range with no free block says so', async () => {
    const held = await reservePorts(20, range);
    await expect(reservePorts(1, range)).rejects.toThrow(`no block of 1 free ports between ${range.first} and ${range.end - 1}`);
    held.release();
  });
});
