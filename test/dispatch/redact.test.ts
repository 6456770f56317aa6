import { describe, expect, it } from 'vitest';
import { REDACTED, createRedactor, createStreamRedactor } from '../../src/dispatch/redact.js';

const PAT = 'svc_pat_AbC123xyz789DEF';
const RUN = 'svc_run_9f8e7d6c5b4a';
const GIT = 'v1.0123456789abcdef0123456789abcdef01234567';

describe('createRedactor', () => {
  const redact = createRedactor([PAT, RUN, GIT, '', 'ab']);

  it.each([
    [`token ${PAT} here`, `token ${REDACTED} here`],
    [`run=${RUN}`, `run=${REDACTED}`],
    [`https://x-access-token:${GIT}@git.example/acme/r.git`, `https://x-access-token:${REDACTED}@git.example/acme/r.git`],
    ['other svc_pat_Zz9Yy8Xx7 leak', `other ${REDACTED} leak`],
    ['ghs_16CharsOrMoreAbcdef1234 and ghp_ABCDEFGHIJKLMNOPQRST', `${REDACTED} and ${REDACTED}`],
    ['github_pat_11ABCDEFG0123456789_abcdefXYZ', REDACTED],
    ['OPENAI sk-proj-abcdefghijklmnop end', `OPENAI ${REDACTED} end`],
    ['Authorization: Bearer abc.def.ghi', `Authorization: ${REDACTED}`],
    ['authorization: token 12345678', `authorization: ${REDACTED}`],
    ['{"Authorization": "Basic dXNlcjpwYXNz"}', `{"Authorization": "${REDACTED}"}`],
    ['curl -H "bearer eyJhbGciOiJIUzI1NiJ9.x.y"', `curl -H "bearer ${REDACTED}"`],
  ])('%j', (input, output) => {
    expect(redact(input)).toBe(output);
  });

  it.each(['task-list done', 'desk-top sk-1', 'ask-me', 'abacus', 'a Bearer of news', 'ghp_short'])('leaves %j alone', (text) => {
    expect(redact(text)).toBe(text);
  });
});

describe('createStreamRedactor', () => {
  /** Feeds `text` in chunks of `size` and returns everything emitted. */
  function stream(text: string, size: number, secrets = [PAT, RUN, GIT]): string {
    const r = createStreamRedactor(secrets);
    let out = '';
    for (let i = 0; i < text.length; i += size) out += r.push(text.slice(i, i + size));
    return out + r.flush();
  }

  const text = [
    `starting with ${PAT} in the env`,
    `push https://x:${GIT}@git.example/r.git`,
    'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig',
    `then ${RUN} and a shape svc_pat_Straddle0987654321 and ghs_AAAABBBBCCCCDDDDEEEE`,
    'a normal line with nothing secret',
  ].join('\n');

  it.each([1, 2, 3, 5, 7, 11, 16, 64, 1000])('redacts secrets straddling chunks of %d chars', (size) => {
    const out = stream(text, size);
    expect(out).toBe(createRedactor([PAT, RUN, GIT])(text));
    for (const secret of [PAT, RUN, GIT, 'eyJhbGciOiJIUzI1NiJ9', 'svc_pat_Straddle', 'ghs_AAAA']) expect(out).not.toContain(secret);
  });

  it('emits complete lines at once and holds the unfinished tail (at least longest secret - 1)', () => {
    const r = createStreamRedactor([PAT]);
    const first = `first line, long enough to be past the held tail\n`;
    expect(r.push(`${first}second `)).toBe(first);
    expect(r.push(PAT.slice(0, 10))).toBe('');
    expect(r.push(`${PAT.slice(10)} done\n`)).toBe(`second ${REDACTED} done\n`);
    expect(r.flush()).toBe('');
  });

  it('does not hold a long line without secrets for ever', () => {
    const r = createStreamRedactor([PAT]);
    const out = r.push(`${'word '.repeat(2000)}`);
    expect(out.length).toBeGreaterThan(9000);
    expect(out + r.flush()).toBe('word '.repeat(2000));
  });

  it('redacts a multi-line secret straddling chunks', () => {
    const pem = '-----BEGIN KEY-----\nMIIEabcdefgh\n-----END KEY-----';
    const text = `key:\n${pem}\nafter\n`;
    for (const size of [1, 4, 9]) expect(stream(text, size, [pem])).toBe(`key:\n${REDACTED}\nafter\n`);
  });

  it('redacts a secret straddling chunks inside an over-long line', () => {
    const text = `${'y'.repeat(5000)} ${PAT} ${'z'.repeat(5000)}\n`;
    for (const size of [3, 100, 4097]) {
      const out = stream(text, size);
      expect(out).not.toContain(PAT);
      expect(out).toBe(text.replace(PAT, REDACTED));
    }
  });

  it('never splits a UTF-8 character across Buffer chunks', () => {
    const r = createStreamRedactor([]);
    const bytes = Buffer.from('héllo wörld ✓\n');
    let out = '';
    for (let i = 0; i < bytes.length; i++) out += r.push(bytes.subarray(i, i + 1));
    expect(out + r.flush()).toBe('héllo wörld ✓\n');
  });
});
