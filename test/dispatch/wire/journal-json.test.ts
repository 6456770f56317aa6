// The journal escapes long bodies its own way when it can (journal.ts): every line must still be
// exactly what JSON.stringify writes, since the reader, `svc runs recover` and the service read it
// as that.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import type { DispatchEventInput } from '../../../src/contract/types.js';
import { Journal, jsonText } from '../../../src/dispatch/wire/journal.js';

/** Text of every kind a log holds, from a fixed seed: plain words, quotes, escapes, controls, surrogates. */
function texts(count: number): string[] {
  let seed = 42;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  const pieces = [
    'plain words ',
    '\n',
    '\t',
    '\r',
    '"',
    '\\',
    '\u001b[31m',
    '\u0000',
    '\u007f',
    'é',
    '€',
    '😀',
    '\ud800',
    '\udc00',
    '\u2028',
    '</script>',
    "'",
  ];
  return Array.from({ length: count }, (_, i) => {
    // Half are plain text and newlines (the quick way); the rest draw from everything.
    const pool = i % 2 === 0 ? pieces.slice(0, 2) : pieces;
    return Array.from({ length: 20 + rand(400) }, () => pool[rand(pool.length)]).join('');
  });
}

describe('journal lines', () => {
  test('jsonText is JSON.stringify for text of every kind', () => {
    for (const text of texts(400)) expect(jsonText(text)).toBe(JSON.stringify(text));
  });

  test('every event line is the JSON.stringify of its record, long bodies or short, any key order', () => {
    const journal = Journal.open(join(mkdtempSync(join(tmpdir(), 'svc-journal-json-')), 'journal.jsonl'));
    const at = new Date('2026-11-27T14:00:00.000Z');
    const events: DispatchEventInput[] = texts(200).flatMap((body) => [{ workItemKey: 'A-1', body }, { body }]);
    // A body that is not the event's last key, and one whose key is in the middle of the text.
    events.push({ body: 'y'.repeat(300), workItemKey: 'A-1' } as DispatchEventInput, { workItemKey: '"body":""}}', body: 'z'.repeat(300) });
    for (const ev of events) journal.append(ev, at);
    journal.ack(3, 9);
    journal.close();
    const lines = readFileSync(journal.path, 'utf8').split('\n').slice(0, -1);
    expect(lines).toEqual([
      ...events.map((ev, i) => JSON.stringify({ t: 'ev', n: i + 1, at: at.toISOString(), ev })),
      JSON.stringify({ t: 'ack', n: 3, seq: 9 }),
    ]);
  });
});
