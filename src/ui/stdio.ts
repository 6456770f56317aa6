// Standard output and error as svc writes them. Node makes process.stdout and process.stderr on
// first use, and for a pipe or a terminal that loads its net and stream modules and builds a socket
// around the descriptor: about 1.5 ms each, on every command, where `svc config get` writes one
// line (bench/README.md, the start-up rows). So a line goes straight to the descriptor in a
// blocking write, as gh or any C program writes it, until something needs more than `write` and
// `isTTY` (a pipeline, ora, a listener, a terminal's width) or a long-running command asks for
// Node's stream (`useNodeStream`). From then on everything goes through Node's stream, which
// queues what a slow pipe cannot take yet instead of blocking the event loop.
import { fstatSync, writeSync } from 'node:fs';
import type { OutStream } from './output.js';

export interface DirectStdio {
  /** Writes straight to the descriptor until Node's stream is made; a stream in every other way. */
  readonly stream: OutStream;
  /** Node's stream from now on (made now if it was not). */
  useNodeStream(): OutStream;
}

export interface DirectStdioOptions {
  /** Makes Node's stream for this descriptor (process.stdout): called once, when first needed. */
  make: () => OutStream;
  /** Whether the descriptor is a terminal (node:tty's isatty, which loads Node's net module). */
  isatty: (fd: number) => boolean;
}

export function directStdio(fd: number, o: DirectStdioOptions): DirectStdio {
  let made: OutStream | undefined;
  let terminal: boolean | undefined;
  const useNodeStream = () => (made ??= o.make());
  // A terminal is a character device: for a pipe or a file the answer needs no tty module.
  const isTTY = () => (terminal ??= isCharacterDevice(fd) && o.isatty(fd));

  function write(chunk: string | Uint8Array, encoding?: BufferEncoding | WriteCallback, callback?: WriteCallback): boolean {
    if (typeof encoding === 'function') [callback, encoding] = [encoding, undefined];
    if (made) return made.write(chunk, encoding ?? 'utf8', callback);
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, encoding) : chunk;
    let done = 0;
    try {
      while (done < bytes.length) done += writeSync(fd, bytes, done);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // A descriptor left non-blocking by another process, its buffer full: Node's stream waits
      // for room, with the rest of this chunk first in its queue.
      if (code === 'EAGAIN') return useNodeStream().write(bytes.subarray(done), callback);
      // The reader went away (`svc help exit-codes | head -1`): as with Node's stream (cli.ts),
      // the command runs on and its further output goes nowhere.
      if (code !== 'EPIPE') throw error;
    }
    if (callback) queueMicrotask(() => callback(null));
    return true;
  }

  const stream = new Proxy({} as OutStream, {
    get(_target, prop) {
      if (!made) {
        if (prop === 'write') return write;
        if (prop === 'isTTY') return isTTY();
        if (prop === 'fd') return fd;
        if (prop === 'columns' && !isTTY()) return undefined;
      }
      const real = useNodeStream();
      const value: unknown = Reflect.get(real, prop, real);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(real) : value;
    },
    set: (_target, prop, value) => Reflect.set(useNodeStream(), prop, value),
    has: (_target, prop) => prop in useNodeStream(),
  });
  return { stream, useNodeStream };
}

type WriteCallback = (error?: Error | null) => void;

function isCharacterDevice(fd: number): boolean {
  try {
    return fstatSync(fd).isCharacterDevice();
  } catch {
    return false;
  }
}
