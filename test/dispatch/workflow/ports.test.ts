// Ports per leg (src/dispatch/workflow/ports.ts): distinct within a process and from another svc
// process's (a lease file per port, in a folder only svc can write), a dead svc's leases taken
// over, never one another program listens on, and, as root, a lease place no agent can enter and a
// range no agent can squat on by holding the names the old lock used.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { processStart } from '../../../src/dispatch/state/run-lock.js';
import { portLeaseDir, reservePorts } from '../../../src/dispatch/workflow/ports.js';

// A range of its own per test file run, away from the default one (legs of other tests) and below
// the kernel's ephemeral ports (32768 and up), which any connection may take.
const base = 12_000 + (process.pid % 200) * 20;
const range = { first: base, end: base + 20 };
const isRoot = process.getuid?.() === 0;
/** A uid of no user and no pool, for the agent's side. */
const STRANGER_UID = 47_000 + (process.pid % 500);
const children: ChildProcess[] = [];
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'svc-port-leases-'));
});
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** A node child printing `ready` once `code` (run after its listeners are set) has bound what it binds. */
async function child(code: string, opts: { uid?: number } = {}): Promise<ChildProcess> {
  const c = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'], ...(opts.uid ? { uid: opts.uid, gid: opts.uid } : {}) });
  children.push(c);
  await new Promise<void>((done, fail) => {
    c.stdout!.once('data', () => done());
    c.once('exit', (code) => fail(new Error(`child exited ${code} before it was ready`)));
  });
  return c;
}

const gone = (c: ChildProcess) => new Promise((done) => (c.exitCode !== null ? done(null) : c.once('exit', done)));

describe('reservePorts', () => {
  test('two blocks at once in one process do not overlap; a released block is handed out again', async () => {
    const [a, b] = await Promise.all([reservePorts(3, { dir, range }), reservePorts(3, { dir, range })]);
    expect(new Set([a!.first, a!.first + 1, a!.first + 2, b!.first, b!.first + 1, b!.first + 2]).size).toBe(6);
    const first = Math.min(a!.first, b!.first);
    (a!.first === first ? a! : b!).release();
    const again = await reservePorts(3, { dir, range });
    expect(again.first).toBe(first);
    again.release();
    (a!.first === first ? b! : a!).release();
  });

  test("a port another live svc leased is passed over; a dead svc's lease is taken over", async () => {
    const other = await child('console.log("ready"); setInterval(() => {}, 1000)');
    writeFileSync(join(dir, String(range.first)), JSON.stringify({ pid: other.pid, start: processStart(other.pid!) }));
    // A pid that is gone, and a live pid whose start time is not the lease's (a reused pid).
    writeFileSync(join(dir, String(range.first + 1)), JSON.stringify({ pid: 4_194_303, start: '1' }));
    writeFileSync(join(dir, String(range.first + 2)), JSON.stringify({ pid: process.pid, start: '1' }));
    const block = await reservePorts(1, { dir, range });
    expect(block.first).toBe(range.first + 1);
    expect(JSON.parse(readFileSync(join(dir, String(range.first + 1)), 'utf8'))).toMatchObject({ pid: process.pid });
    const next = await reservePorts(1, { dir, range });
    expect(next.first).toBe(range.first + 2);
    block.release();
    next.release();
    expect(existsSync(join(dir, String(range.first + 1)))).toBe(false);
    other.kill('SIGKILL');
    await gone(other);
    const after = await reservePorts(1, { dir, range });
    expect(after.first).toBe(range.first);
    after.release();
  });

  test('a port some other program listens on, on loopback or on another address, is passed over', async () => {
    const server = createServer();
    await new Promise<void>((done) => server.listen(range.first, '127.0.0.1', done));
    // IPv6 loopback: a bind on 127.0.0.1 does not see it; the kernel's tables do.
    const v6 = createServer();
    await new Promise<void>((done) => v6.listen(range.first + 3, '::1', done));
    try {
      const block = await reservePorts(2, { dir, range });
      expect(block.first).toBe(range.first + 4);
      block.release();
    } finally {
      server.close();
      v6.close();
    }
  });

  test('a range with no free block says so', async () => {
    const held = await reservePorts(20, { dir, range });
    await expect(reservePorts(1, { dir, range })).rejects.toThrow(`no block of 1 free ports between ${range.first} and ${range.end - 1}`);
    held.release();
  });

  test("inUse names a port of the block another uid holds, and not the leg's own sockets", async () => {
    const block = await reservePorts(2, { dir, range });
    try {
      expect(await block.inUse(null)).toBeNull();
      const server = createServer();
      await new Promise<void>((done) => server.listen(block.first + 1, '127.0.0.1', done));
      try {
        expect(await block.inUse(null)).toBe(`port ${block.first + 1} is already in use by another process`);
        // svc's own uid is the leg's here: its own socket is no stranger's.
        expect(await block.inUse(process.getuid?.() ?? 0)).toBeNull();
        expect(await block.inUse(STRANGER_UID)).toBe(`port ${block.first + 1} is already in use by another process`);
      } finally {
        server.close();
      }
    } finally {
      block.release();
    }
  });
});

describe.skipIf(!isRoot || process.platform !== 'linux')('port leases as root', () => {
  test("live in root's own 0700 folder, which an agent uid cannot list, read, write or remove from (EACCES)", async () => {
    const leases = portLeaseDir('/nonexistent');
    expect(statSync(leases)).toMatchObject({ uid: 0 });
    expect(statSync(leases).mode & 0o777).toBe(0o700);
    const block = await reservePorts(1, { stateDir: '/nonexistent', range });
    try {
      const lease = join(leases, String(block.first));
      expect(existsSync(lease)).toBe(true);
      const tries = [
        `fs.readdirSync(${JSON.stringify(leases)})`,
        `fs.readFileSync(${JSON.stringify(lease)})`,
        `fs.writeFileSync(${JSON.stringify(join(leases, String(block.first + 1)))}, '{}')`,
        `fs.unlinkSync(${JSON.stringify(lease)})`,
      ];
      const codes = tries.map((t) =>
        execFileSync(process.execPath, ['-e', `const fs = require('node:fs'); try { ${t}; console.log('done') } catch (e) { console.log(e.code) }`], {
          uid: STRANGER_UID,
          gid: STRANGER_UID,
          encoding: 'utf8',
        }).trim(),
      );
      expect(codes).toEqual(['EACCES', 'EACCES', 'EACCES', 'EACCES']);
      expect(existsSync(lease)).toBe(true);
    } finally {
      block.release();
    }
  });

  test('an agent holding the old lock names (\\0svc-port-N) for the whole range squats on nothing', async () => {
    await child(
      `const net = require('node:net'); let left = ${range.end - range.first};
       for (let p = ${range.first}; p < ${range.end}; p++) net.createServer().listen('\\0svc-port-' + p, () => { if (--left === 0) console.log('ready'); });`,
      { uid: STRANGER_UID },
    );
    expect(readFileSync('/proc/net/unix', 'utf8')).toContain(`@svc-port-${range.end - 1}\n`);
    const block = await reservePorts(2, { stateDir: '/nonexistent', range });
    expect(block.first).toBe(range.first);
    block.release();
  });
});
