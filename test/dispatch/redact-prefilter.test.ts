// The redactor's fast pass (src/dispatch/redact.ts `maybe`) skips the patterns on text in which
// none can match. It must never skip a secret: every shape in any letter case, split at every
// position across two chunks, is redacted exactly as the full patterns redact it whole.
import { describe, expect, test } from 'vitest';
import { createRedactor, createStreamRedactor, REDACTED } from '../../src/dispatch/redact.js';

const SECRET = 'Zq9-literal-secret-Xw';
const SAMPLES = [
  'svc_pat_abcdEFGH1234',
  'svc_run_abcdEFGH1234',
  'ghp_0123456789abcdefABCD',
  'gho_0123456789abcdefABCD',
  'github_pat_0123456789abcdef_XYZ',
  'sk-0123456789abcdef',
  'AUTHORIZATION: token abc123',
  'aUtHoRiZaTiOn="xyz987"',
  'BEARER eyJhbGciOi.payload.sig',
  'x bEaReR abcdef.123',
  `env ${SECRET} end`,
];

describe('the fast pass never lets a secret through', () => {
  test.each(SAMPLES)('%s, split anywhere in a stream of ordinary lines', (sample) => {
    const text = `ordinary output line one\n${sample}\nordinary output line two\n`;
    const whole = createRedactor([SECRET])(text);
    expect(whole).toContain(REDACTED);
    for (let cut = 0; cut <= text.length; cut++) {
      const r = createStreamRedactor([SECRET]);
      const out = r.push(text.slice(0, cut)) + r.push(text.slice(cut)) + r.flush();
      expect(out, `cut at ${cut}`).toBe(whole);
    }
  });

  test('text with nothing to redact comes out unchanged, whatever the chunks', () => {
    const line = 'agent: reading src/dispatch/event-stream.ts, running the tests, 3 passed, 0 failed ... high-risk task-list\n';
    const text = line.repeat(500);
    const r = createStreamRedactor([SECRET]);
    let out = '';
    for (let i = 0; i < text.length; i += 977) out += r.push(Buffer.from(text.slice(i, i + 977)));
    expect(out + r.flush()).toBe(text);
  });
});
