// How many modules an agent's output passes through on its way to the service (CONTRIBUTING.md,
// the code map: "An agent's bytes to the wire"). A real leg with --send-logs against the local
// service: the agent prints a marker, and the call stack is captured at the two places its bytes
// are handed to the system — written into the run's journal (crash safety: before it is sent) and
// written to the HTTP request of appendDispatchEvents. The modules of src/ on those stacks (V8
// follows `await`, so an async step is on them as a sync one is) are the hops the bytes are passed
// along. A fair count, not a generous one: a module that takes the bytes and hands them on is on a
// stack, whether it is a class, a closure or an adapter; a new one anywhere on the way fails here.
// What it does not see is a helper a hop calls and that returns, holding nothing (the stream
// redactor of redact.ts, the journal reader that reads a batch back), which the code map lists.
import fs from 'node:fs';
import http from 'node:http';
import { syncBuiltinESMExports } from 'node:module';
import { relative, resolve } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { runDispatch } from '../../src/dispatch/lifecycle/dispatch.js';
import { startHarness, type Harness } from '../support/engine.js';

const SRC = resolve(import.meta.dirname, '../../src');
const MARKER = `svc-bytes-marker-${process.pid}-${Date.now()}`;

/** The hops, in order (CONTRIBUTING.md, the code map): the goal of 6. */
const PATH = [
  'dispatch/process/run-in-group.ts',
  'dispatch/wire/leg-log.ts',
  'dispatch/wire/event-stream.ts',
  'dispatch/wire/journal.ts',
  'api/client.ts',
  'api/request.ts',
];

const holds = (data: unknown): boolean =>
  typeof data === 'string'
    ? data.includes(MARKER)
    : data instanceof Uint8Array
      ? Buffer.from(data.buffer, data.byteOffset, data.byteLength).includes(MARKER)
      : false;

/** The modules of src/ on a stack, first frame first, each once. */
function modulesOf(stack: string): string[] {
  const seen: string[] = [];
  for (const m of stack.matchAll(/(\/[^\s():]+\.ts):\d+:\d+/g)) {
    const file = relative(SRC, m[1]!);
    if (!file.startsWith('..') && !seen.includes(file)) seen.push(file);
  }
  return seen;
}

let h: Harness | undefined;
const undo: (() => void)[] = [];
afterEach(async () => {
  for (const u of undo.splice(0)) u();
  syncBuiltinESMExports();
  await h?.close();
});

test("an agent's output reaches the HTTP request through the modules of the code map, no more", async () => {
  h = await startHarness();
  const stacks: { sink: 'journal' | 'http'; modules: string[] }[] = [];
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 200;
  undo.push(() => (Error.stackTraceLimit = limit));
  const capture = (sink: 'journal' | 'http') => stacks.push({ sink, modules: modulesOf(new Error().stack ?? '') });
  // The journal's writes: by the file the descriptor is open on (Linux's /proc/self/fd).
  const isJournal = (fd: number) => {
    try {
      return fs.readlinkSync(`/proc/self/fd/${fd}`).endsWith('journal.jsonl');
    } catch {
      return false;
    }
  };
  const { writeSync, writevSync } = fs;
  fs.writeSync = ((fd: number, data: unknown, ...rest: unknown[]) => {
    // The journal writes a part of a buffer it reuses: only that part counts.
    const part =
      data instanceof Uint8Array && typeof rest[0] === 'number' ? data.subarray(rest[0], rest[0] + ((rest[1] as number | undefined) ?? data.length)) : data;
    if (holds(part) && isJournal(fd)) capture('journal');
    return (writeSync as (...a: unknown[]) => number)(fd, data, ...rest);
  }) as typeof fs.writeSync;
  fs.writevSync = ((fd: number, parts: readonly NodeJS.ArrayBufferView[], ...rest: unknown[]) => {
    if (parts.some(holds) && isJournal(fd)) capture('journal');
    return (writevSync as (...a: unknown[]) => number)(fd, parts, ...rest);
  }) as typeof fs.writevSync;
  syncBuiltinESMExports();
  undo.push(() => {
    fs.writeSync = writeSync;
    fs.writevSync = writevSync;
  });
  const { end, write } = http.ClientRequest.prototype;
  http.ClientRequest.prototype.end = function (this: http.ClientRequest, ...args: unknown[]) {
    if (holds(args[0])) capture('http');
    return (end as (...a: unknown[]) => http.ClientRequest).apply(this, args);
  } as typeof end;
  http.ClientRequest.prototype.write = function (this: http.ClientRequest, ...args: unknown[]) {
    if (holds(args[0])) capture('http');
    return (write as (...a: unknown[]) => boolean).apply(this, args);
  } as typeof write;
  undo.push(() => {
    http.ClientRequest.prototype.end = end;
    http.ClientRequest.prototype.write = write;
  });

  const key = h.item('task', 'prints a marker');
  // 60 KB of output: full 16 KiB bodies are cut and journalled as the pipe delivers them (the rest
  // goes at the stream's tick or the leg's end, other callers of the same hops).
  const agentCmd = `sh -c "yes ${MARKER} | head -c 60000"`;
  await runDispatch(h.opts({ keys: [key], agent: { agentCmd }, sendLogs: true, allowEmpty: true }), h.deps());

  const fromPipe = stacks.filter((s) => s.sink === 'journal' && s.modules.at(-1) === PATH[0]);
  const wire = stacks.filter((s) => s.sink === 'http');
  // Both sinks saw the marker: the probe is live, and so is the path it measures.
  expect(fromPipe.length).toBeGreaterThan(0);
  expect(wire.length).toBeGreaterThan(0);
  // From the child's pipe to the journal, then from the journal to the request, as the map says.
  for (const s of fromPipe) expect(s.modules.toReversed()).toEqual(PATH.slice(0, 4));
  for (const s of wire) expect(s.modules.toReversed()).toEqual([PATH[2], ...PATH.slice(4)]);
  const hops = new Set([...fromPipe, ...wire].flatMap((s) => s.modules));
  expect([...hops].sort()).toEqual([...PATH].sort());
  expect(hops.size).toBeLessThanOrEqual(6);
});
