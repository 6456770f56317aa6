// The pure parts of the client: the exit-code table, the retry decision, the checks made before any
// request. The wire behaviour of the same rules is tested through the fault proxy (retry.test.ts).
import { describe, expect, test } from 'vitest';
import { ApiError, ClientConfigError, createApiClient, decideRetry, exitCodeFor, redactTokens, type WireFault } from '../../src/api/index.js';
import { DEFAULT_TUNING, type RetryTuning } from '../../src/api/retry-policy.js';

const PAT = 'svc_pat_0123456789abcdefABCDEF0123456789';

function apiError(status: number, over: { fault?: WireFault; ambiguous?: boolean; reset?: number } = {}): ApiError {
  return new ApiError({
    status,
    code: null,
    message: 'x',
    requestId: 'r',
    operationId: 'getMe',
    method: 'GET',
    path: '/api/v1/me',
    ambiguous: over.ambiguous ?? false,
    fault: over.fault ?? null,
    rateLimitReset: over.reset ?? null,
  });
}

describe('exitCodeFor (README.md, "Exit codes")', () => {
  test.each([
    ['422 validation', apiError(422), 2],
    ['401 unauthenticated', apiError(401), 3],
    ['403 missing scope', apiError(403), 3],
    ['404 not found', apiError(404), 4],
    ['402 entitlement', apiError(402), 6],
    ['429 past max-wait', apiError(429), 5],
    ['500', apiError(500), 5],
    ['503', apiError(503), 5],
    ['network refused', apiError(0, { fault: 'refused' }), 5],
    ['network reset', apiError(0, { fault: 'reset' }), 5],
    ['2xx body cut short', apiError(200, { fault: 'truncated' }), 5],
    ['409 conflict', apiError(409), 1],
    ['412 precondition', apiError(412), 1],
    ['bad token prefix', new ClientConfigError('token', 'x'), 3],
    ['insecure base URL', new ClientConfigError('insecure', 'x'), 2],
    ['bad base URL', new ClientConfigError('base_url', 'x'), 2],
    ['empty key', new ClientConfigError('argument', 'x'), 2],
    ['error carrying its own exitCode', Object.assign(new Error('usage'), { exitCode: 2 }), 2],
    ['anything else', new Error('boom'), 1],
    ['a thrown string', 'boom', 1],
  ])('%s -> %i', (_name, error, code) => {
    expect(exitCodeFor(error)).toBe(code);
  });
});

describe('decideRetry', () => {
  const tuning: RetryTuning = { ...DEFAULT_TUNING, maxWaitMs: 10_000, random: () => 0.5 };
  const state = { attempt: 1, waitedMs: 0, serverErrorRetries: 0, nowMs: 1_000_000, repeatable: false, method: 'POST' };

  test.each([
    ['429 waits until the reset', apiError(429, { reset: 1_003 }), {}, true],
    ['429 whose reset lies past max-wait gives up at once', apiError(429, { reset: 1_011 }), {}, false],
    ['429 after the budget is spent', apiError(429, { reset: 1_001 }), { waitedMs: 9_500 }, false],
    ['503 on a write (nothing was applied)', apiError(503), {}, true],
    ['502 on a plain write (may be applied)', apiError(502, { ambiguous: true }), {}, false],
    ['502 on a repeatable write', apiError(502, { ambiguous: true }), { repeatable: true }, true],
    ['reset on a plain write', apiError(0, { fault: 'reset', ambiguous: true }), {}, false],
    ['refused on a plain write', apiError(0, { fault: 'refused' }), {}, true],
    ['500 on a write', apiError(500, { ambiguous: true }), { repeatable: true }, false],
    ['500 on a read', apiError(500), { method: 'GET', repeatable: true }, true],
    ['500 on a read after three retries', apiError(500), { method: 'GET', repeatable: true, serverErrorRetries: 3 }, false],
    ...[401, 403, 404, 409, 412, 422].map((s) => [`${s} on a read`, apiError(s), { method: 'GET', repeatable: true }, false] as const),
  ] as const)('%s', (_name, error, over, retry) => {
    const decision = decideRetry(error, { ...state, ...over }, tuning);
    expect(decision.retry).toBe(retry);
  });

  test('429 waits the time to the reset, not a backoff', () => {
    const decision = decideRetry(apiError(429, { reset: 1_003 }), state, tuning);
    expect(decision.retry && decision.delayMs).toBeGreaterThanOrEqual(3_000);
    expect(decision.retry && decision.delayMs).toBeLessThan(3_300);
  });

  test('backoff grows with the attempt under full jitter and stays inside the budget', () => {
    const hi: RetryTuning = { ...tuning, random: () => 0.999 };
    const delays = [1, 2, 3, 4].map((attempt) => decideRetry(apiError(503), { ...state, attempt }, hi));
    const ms = delays.map((d) => (d.retry ? d.delayMs : -1));
    expect(ms).toEqual([...ms].sort((a, b) => a - b));
    expect(ms[0]).toBeLessThan(DEFAULT_TUNING.baseDelayMs);
    expect(decideRetry(apiError(503), { ...state, attempt: 30 }, hi).retry).toBe(false); // 20 s > 10 s budget
  });
});

describe('checks before any request', () => {
  test.each([
    ['no token', { token: '' }, 'token'],
    ['a token without the prefix', { token: 'ghp_abcdef0123456789' }, 'token'],
    ['only the prefix', { token: 'svc_pat_' }, 'token'],
    ['a run credential where a PAT is expected', { token: 'svc_run_abc123' }, 'token'],
    // A run credential may have any shape the service issues (docs/hosted.md), but no whitespace.
    ['a blank run credential', { token: '  ', credentialKind: 'run' as const }, 'token'],
    ['a run credential with whitespace inside', { token: 'svc_run_ab cd', credentialKind: 'run' as const }, 'token'],
    ['a token with a newline (header injection)', { token: `${PAT}\nX-Evil: 1` }, 'token'],
    ['plain http to a remote host', { baseUrl: 'http://svc.example.com' }, 'insecure'],
    ['plain http to a LAN address', { baseUrl: 'http://10.0.0.5:8080' }, 'insecure'],
    ['a non-http scheme', { baseUrl: 'ftp://svc.example.com' }, 'base_url'],
    ['not a URL', { baseUrl: 'svc.example.com' }, 'base_url'],
    ['credentials in the URL', { baseUrl: 'https://user:pw@svc.example.com' }, 'base_url'],
  ])('refuses %s', (_name, over, problem) => {
    const make = () => createApiClient({ baseUrl: 'https://svc.example.com', token: PAT, ...over });
    expect(make).toThrow(ClientConfigError);
    try {
      make();
    } catch (error) {
      expect((error as ClientConfigError).problem).toBe(problem);
      // The refusal names the expected shape, never the token itself.
      expect((error as Error).message).not.toContain(PAT);
      expect((error as Error).message).not.toContain('ghp_abcdef');
    }
  });

  test.each([
    ['https anywhere', { baseUrl: 'https://svc.example.com' }],
    ['http to localhost', { baseUrl: 'http://localhost:8080' }],
    ['http to 127.0.0.1', { baseUrl: 'http://127.0.0.1:8080' }],
    ['http to [::1]', { baseUrl: 'http://[::1]:8080' }],
    ['http to a remote host with insecure', { baseUrl: 'http://svc.example.com', insecure: true }],
    ['a run credential for a hosted run', { token: 'svc_run_abc123', credentialKind: 'run' as const }],
    ["a run credential of the contract's bearer shape", { token: PAT, credentialKind: 'run' as const }],
  ])('accepts %s', async (_name, over) => {
    const api = createApiClient({ baseUrl: 'https://svc.example.com', token: PAT, ...over });
    await api.close();
  });

  test('a trailing /api/v1 on the base URL is not doubled', async () => {
    const api = createApiClient({ baseUrl: 'http://127.0.0.1:1/api/v1/', token: PAT });
    expect(api.baseUrl).toBe('http://127.0.0.1:1');
    await api.close();
  });
});

test.each([
  ['svc_pat_abcDEF123', '[REDACTED]'],
  ['token svc_run_xyz789 here', 'token [REDACTED] here'],
  ['Authorization: Bearer abc.def', 'Authorization: Bearer [REDACTED]'],
  ['ghs_abc123 and github_pat_11AB_cd', '[REDACTED] and [REDACTED]'],
  ['nothing secret', 'nothing secret'],
])('redactTokens(%j)', (input, output) => {
  expect(redactTokens(input)).toBe(output);
});
