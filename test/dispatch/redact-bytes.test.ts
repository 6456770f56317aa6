// The stream redactor judges agent output as bytes (redact.ts, pushBytes): what needs no redaction
// comes back as the very bytes received, and what does is redacted as text. Secrets and characters
// cut anywhere across chunks must come out exactly as the whole text is redacted.
import { describe, expect, test } from 'vitest';
import { createRedactor, createStreamRedactor, REDACTED } from '../../src/dispatch/redact.js';

const SECRET = 'Zq9-lïteral-secret-✓';
const text = [
  'ordinary output, with héllo wörld ✓ and 😀 in it',
  `a literal ${SECRET} there`,
  'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig',
  'a shape svc_pat_Straddle0987654321 and ghs_AAAABBBBCCCCDDDDEEEE',
  'the end ✓',
].join('\n');
const bytes = Buffer.from(text);

/** What one pushBytes gave, as bytes (the held bytes and the chunk's part come as separate views). */
const joined = (out: Buffer[] | string): Buffer => (typeof out === 'string' ? Buffer.from(out) : Buffer.concat(out));

/** Everything the redactor emits for `parts`, as text. */
function emitted(parts: Buffer[]): string {
  const r = createStreamRedactor([SECRET]);
  return Buffer.concat(parts.map((p) => joined(r.pushBytes(p)))).toString() + r.flush();
}

describe('pushBytes', () => {
  test('cut in two at every byte, the output is the whole text redacted', () => {
    const whole = createRedactor([SECRET])(text);
    expect(whole.match(new RegExp(REDACTED.replace(/[[\]]/g, '\\$&'), 'g'))).toHaveLength(4);
    for (let cut = 0; cut <= bytes.length; cut++) {
      expect(emitted([bytes.subarray(0, cut), bytes.subarray(cut)]), `cut at byte ${cut}`).toBe(whole);
    }
  });

  test('byte by byte, the output is the whole text redacted', () => {
    expect(emitted([...bytes].map((b) => Buffer.from([b])))).toBe(createRedactor([SECRET])(text));
  });

  test('what needs no redaction comes back as the bytes received, never cut inside a character', () => {
    const r = createStreamRedactor([SECRET]);
    const line = Buffer.from('plain output ✓ without secrets\n');
    const out = r.pushBytes(line);
    expect(typeof out !== 'string' && out.length === 1 && out[0]!.buffer === line.buffer && joined(out).equals(line)).toBe(true);
    // A line of 3-byte characters past the 4 KiB held line is cut, on a character boundary.
    const long = Buffer.from('✓'.repeat(3000));
    const first = r.pushBytes(long);
    expect(typeof first !== 'string' && joined(first).length > 0 && joined(first).length % 3 === 0).toBe(true);
    expect(joined(first).toString() + r.flush()).toBe('✓'.repeat(3000));
  });

  test('bytes that are not UTF-8 reach the log as they are', () => {
    const r = createStreamRedactor([SECRET]);
    const odd = Buffer.from([0x61, 0xff, 0xfe, 0x62, 0x0a]);
    expect(joined(r.pushBytes(odd))).toEqual(odd);
  });
});
