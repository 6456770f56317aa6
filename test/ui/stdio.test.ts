// stdout and stderr written straight to their descriptors until Node's stream is needed
// (src/ui/stdio.ts), on real descriptors: a file, a socket left non-blocking and full, a pipe whose
// reader is gone.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, mkdtempSync, openSync, readFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { expect, test, vi } from 'vitest';
import { directStdio } from '../../src/ui/stdio.js';
import type { OutStream } from '../../src/ui/output.js';

const file = () => {
  const path = join(mkdtempSync(join(tmpdir(), 'svc-stdio-')), 'out');
  return { path, fd: openSync(path, 'w') };
};

test('lines go to the descriptor without making a stream; a file is no terminal and has no width', async () => {
  const { path, fd } = file();
  const make = vi.fn((): OutStream => new PassThrough());
  const isatty = vi.fn(() => true);
  const { stream } = directStdio(fd, { make, isatty });
  expect(stream.write('one\n')).toBe(true);
  const written = new Promise((done) => stream.write(Buffer.from('two\n'), done));
  stream.write('thr\u00e9e\n', 'utf8');
  await written;
  expect(stream.isTTY).toBe(false);
  expect(stream.columns).toBeUndefined();
  expect(make).not.toHaveBeenCalled();
  // A file is no character device: the terminal check never needed node:tty.
  expect(isatty).not.toHaveBeenCalled();
  closeSync(fd);
  expect(readFileSync(path, 'utf8')).toBe('one\ntwo\nthrée\n');
});

test('anything more than a write makes Node stream once, and every later line goes through it, in order', () => {
  const { path, fd } = file();
  const made = new PassThrough();
  const make = vi.fn((): OutStream => made);
  const io = directStdio(fd, { make, isatty: () => false });
  io.stream.write('before\n');
  const listener = () => {};
  io.stream.on('drain', listener);
  expect(made.listeners('drain')).toEqual([listener]);
  io.stream.write('after\n');
  expect(io.useNodeStream()).toBe(made);
  expect(make).toHaveBeenCalledTimes(1);
  closeSync(fd);
  expect(readFileSync(path, 'utf8')).toBe('before\n');
  expect(made.read()?.toString()).toBe('after\n');
});

test("a character device that is a terminal is asked of isatty, and a terminal's width comes from Node's stream", () => {
  const fd = openSync('/dev/null', 'w');
  const made = Object.assign(new PassThrough(), { columns: 132 });
  const io = directStdio(fd, { make: () => made, isatty: () => true });
  expect(io.stream.isTTY).toBe(true);
  expect(io.stream.columns).toBe(132);
  closeSync(fd);
});

test("a descriptor left non-blocking and full hands the rest to Node's stream, which waits for room: every byte arrives, in order", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-stdio-'));
  const out = join(dir, 'got');
  // cat starts reading only after a moment, so the socket fills first.
  const child = spawn('sh', ['-c', `sleep 0.3; cat > "${out}"`], { stdio: ['pipe', 'ignore', 'inherit'] });
  const fd = (child.stdin as unknown as { _handle: { fd: number } })._handle.fd;
  // libuv made the parent's end non-blocking; fill it to the brim.
  let filled = 0;
  const block = Buffer.alloc(64 * 1024, 'a');
  for (;;) {
    try {
      filled += writeSync(fd, block);
    } catch (error) {
      expect((error as NodeJS.ErrnoException).code).toBe('EAGAIN');
      break;
    }
  }
  const { stream } = directStdio(fd, { make: () => child.stdin as unknown as OutStream, isatty: () => false });
  const tail = Buffer.alloc(300 * 1024, 'b');
  stream.write(tail);
  stream.end();
  await once(child, 'close');
  const got = readFileSync(out, 'latin1');
  expect(got.length).toBe(filled + tail.length);
  expect(got.indexOf('b')).toBe(filled);
  expect(got.endsWith('b'.repeat(tail.length))).toBe(true);
});

test('a reader that went away is no error: the write is dropped, as Node stream would drop it', async () => {
  // The child closes its end at once and lives on, so the parent's end stays open for the test.
  const child = spawn('sh', ['-c', 'exec 0<&-; sleep 5'], { stdio: ['pipe', 'ignore', 'ignore'] });
  try {
    child.stdin.on('error', () => {});
    const fd = (child.stdin as unknown as { _handle: { fd: number } })._handle.fd;
    await new Promise((done) => setTimeout(done, 200));
    expect(() => writeSync(fd, 'x')).toThrow(/EPIPE/);
    const make = vi.fn((): OutStream => new PassThrough());
    const { stream } = directStdio(fd, { make, isatty: () => false });
    expect(stream.write('nobody reads this\n')).toBe(true);
    expect(make).not.toHaveBeenCalled();
  } finally {
    child.kill();
  }
});

test('any other failure of the write is thrown, not swallowed', () => {
  const fd = openSync('/dev/full', 'w');
  const { stream } = directStdio(fd, { make: () => new PassThrough(), isatty: () => false });
  expect(() => stream.write('no room\n')).toThrow(/ENOSPC/);
  closeSync(fd);
});
