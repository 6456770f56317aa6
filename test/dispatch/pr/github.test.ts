// The GitHub REST writer against a local GitHub stand-in: one pull request per branch (opened once,
// updated after), 422 "already exists" settled by updating, reviews only as COMMENT, fix comments,
// GitHub's rate-limit answers waited out within --max-wait, and no token in any body.
import { createServer, type AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createGitHubWriter } from '../../../src/dispatch/pr/github.js';
import { rateLimitWaitMs } from '../../../src/dispatch/pr/github-rest.js';
import { pullRequestBody, reviewBody } from '../../../src/dispatch/pr/body.js';
import { createRedactor } from '../../../src/dispatch/redact.js';
import type { PullRequestLeg } from '../../../src/dispatch/pr/types.js';
import { startGitHubMock, type GitHubMock } from './github-mock.js';

const TOKEN = 'ghs_' + 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8';
const REMOTE = { host: 'github.com', owner: 'acme', name: 'shop', webUrl: 'https://github.com/acme/shop' };
const redact = createRedactor([TOKEN]);

let gh: GitHubMock;
beforeEach(async () => {
  gh = await startGitHubMock({ token: TOKEN, defaultBranch: 'trunk' });
});
afterEach(async () => {
  await gh.close();
});

function leg(over: Partial<PullRequestLeg> = {}): PullRequestLeg {
  return {
    runId: 'run_1',
    command: 'run',
    key: 'PROJ-7',
    title: 'Add a cart',
    repo: '/unused',
    branch: 'svc/PROJ-7',
    durationMs: 65_000,
    tokens: { in: 1200, out: 300 },
    costUsd: 0.42,
    finalMessage: `Done. I used ${TOKEN} to test.`,
    delivery: null,
    draft: false,
    ...over,
  };
}

function writer(over: { maxWaitMs?: number; waits?: number[]; now?: () => number } = {}) {
  return createGitHubWriter({
    apiUrl: gh.url,
    tokenFor: async (repository) => {
      expect(repository).toBe('acme/shop');
      return TOKEN;
    },
    remoteOf: async () => REMOTE,
    maxWaitMs: over.maxWaitMs ?? 60_000,
    redact,
    ...(over.waits ? { sleep: async (ms: number) => void over.waits!.push(ms) } : {}),
    ...(over.now ? { now: over.now } : {}),
  });
}

describe('openOrUpdatePullRequest', () => {
  it('opens once to the default branch, then updates the same pull request', async () => {
    const w = writer();
    const first = await w.openOrUpdatePullRequest(leg(), pullRequestBody(leg(), redact));
    expect(first).toMatchObject({ action: 'opened', number: 1, url: 'https://github.example.test/acme/shop/pull/1' });
    const second = await w.openOrUpdatePullRequest(leg({ title: 'Add a cart, v2' }), pullRequestBody(leg(), redact));
    expect(second).toMatchObject({ action: 'updated', number: 1 });
    expect(gh.pulls('acme/shop')).toHaveLength(1);
    expect(gh.pulls('acme/shop')[0]).toMatchObject({ head: 'svc/PROJ-7', base: 'trunk', title: 'PROJ-7: Add a cart, v2', draft: false });
    const calls = gh.requests.map((r) => `${r.method} ${r.path}`);
    expect(calls).toEqual([
      'GET /repos/acme/shop/pulls',
      'GET /repos/acme/shop',
      'POST /repos/acme/shop/pulls',
      'GET /repos/acme/shop/pulls',
      'PATCH /repos/acme/shop/pulls/1',
    ]);
    expect(gh.requests[0]!.query).toMatchObject({ head: 'acme:svc/PROJ-7', state: 'open' });
    // An update leaves the draft state as the reviewers set it.
    expect(Object.keys(gh.requests[4]!.body!).sort()).toEqual(['body', 'title']);
    expect(gh.requests.every((r) => r.authorization === `token ${TOKEN}`)).toBe(true);
  });

  it("takes the delivery's baseRef and opens a draft with --draft", async () => {
    const d = { repo: 'acme/shop', number: 3, title: 't', url: 'u', state: 'open', ci: null, baseRef: 'release', defaultBranch: 'trunk' } as const;
    await writer().openOrUpdatePullRequest(leg({ delivery: d, draft: true }), 'body');
    expect(gh.pulls('acme/shop')[0]).toMatchObject({ base: 'release', draft: true });
    expect(gh.requests.some((r) => r.method === 'GET' && r.path === '/repos/acme/shop')).toBe(false);
  });

  it('a 422 "A pull request already exists" (opened by someone else after our list) updates theirs', async () => {
    gh.addPull('acme/shop', { head: 'svc/PROJ-7', base: 'trunk', title: 'theirs', body: '', draft: false });
    gh.hideFromList(1);
    const ref = await writer().openOrUpdatePullRequest(leg(), 'ours');
    expect(ref).toMatchObject({ action: 'updated', number: 1 });
    expect(gh.pulls('acme/shop')).toHaveLength(1);
    expect(gh.pulls('acme/shop')[0]).toMatchObject({ title: 'PROJ-7: Add a cart', body: 'ours' });
    expect(gh.requests.map((r) => `${r.method} ${r.path}`)).toContain('POST /repos/acme/shop/pulls');
  });

  it('the body names key, title, run, command, duration, spend and the final message, with no token', async () => {
    await writer().openOrUpdatePullRequest(leg(), pullRequestBody(leg(), redact));
    const body = gh.pulls('acme/shop')[0]!.body;
    for (const part of ['PROJ-7', 'Add a cart', 'run_1', 'svc run', '1m 05s', '1200 in / 300 out', '$0.42', 'Done. I used']) expect(body).toContain(part);
    expect(gh.requests.map((r) => r.rawBody).join('\n')).not.toContain(TOKEN);
  });
});

it("a huge final message is cut to fit GitHub's 65,536-character body, keeping its end", () => {
  const body = pullRequestBody(leg({ finalMessage: `${'x'.repeat(200_000)} THE END` }), redact);
  expect(body.length).toBeLessThan(65_536);
  expect(body).toContain('THE END');
});

describe('reviews and fix comments', () => {
  const delivery = {
    repo: 'acme/shop',
    number: 9,
    title: 'PR',
    url: 'https://github.example.test/acme/shop/pull/9',
    state: 'open',
    ci: 'failing',
    baseRef: 'trunk',
    defaultBranch: 'trunk',
  } as const;

  it("postReview posts a review with event COMMENT on the delivery's pull request", async () => {
    gh.addPull('acme/shop', { head: 'feature', base: 'trunk', title: 'x', body: '', draft: false });
    for (let i = 2; i <= 9; i++) gh.addPull('acme/shop', { head: `f${i}`, base: 'trunk', title: 'x', body: '', draft: false });
    const l = leg({ command: 'review', delivery, finalMessage: `Looks fine; ${TOKEN} leaked in config.ts` });
    const ref = await writer().postReview(l, reviewBody(l, redact));
    expect(ref).toMatchObject({ action: 'reviewed', number: 9 });
    expect(gh.reviews).toHaveLength(1);
    expect(gh.reviews[0]).toMatchObject({ number: 9, event: 'COMMENT' });
    expect(gh.reviews[0]!.body).toContain('Looks fine; [REDACTED] leaked');
    expect(gh.requests.map((r) => r.rawBody).join('\n')).not.toContain(TOKEN);
  });

  it("commentOnFix comments on the delivery's pull request", async () => {
    const ref = await writer().commentOnFix(leg({ command: 'fix', delivery }), 'fixed the build');
    expect(ref).toMatchObject({ action: 'commented', number: 9 });
    expect(gh.comments).toEqual([{ repository: 'acme/shop', number: 9, body: 'fixed the build' }]);
  });

  it('without a delivery there is nothing to review: a one-line error, nothing sent', async () => {
    await expect(writer().postReview(leg(), 'x')).rejects.toThrow('PROJ-7 has no pull request to review');
    expect(gh.requests).toEqual([]);
  });
});

describe('rate limits', () => {
  it('a primary limit (remaining 0) waits until x-ratelimit-reset, then goes on', async () => {
    const now = 1_700_000_000_000;
    const waits: number[] = [];
    gh.failNext({
      status: 403,
      headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(now / 1000 + 30) },
      body: { message: 'API rate limit exceeded' },
    });
    const ref = await writer({ waits, now: () => now }).openOrUpdatePullRequest(leg(), 'b');
    expect(ref.action).toBe('opened');
    expect(waits).toEqual([31_000]);
    expect(gh.requests[0]!.path).toBe('/repos/acme/shop/pulls');
    expect(gh.requests[1]!.path).toBe('/repos/acme/shop/pulls');
  });

  it('retry-after (a secondary limit) is honoured for real, briefly', async () => {
    gh.failNext({ status: 403, headers: { 'retry-after': '1' }, body: { message: 'You have exceeded a secondary rate limit' } });
    const started = Date.now();
    await writer().openOrUpdatePullRequest(leg(), 'b');
    const [limited, retried] = gh.requests;
    expect(retried!.at - limited!.at).toBeGreaterThanOrEqual(950);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(gh.pulls('acme/shop')).toHaveLength(1);
  });

  it('a wait longer than --max-wait fails at once with one line, creating nothing', async () => {
    const waits: number[] = [];
    gh.failNext({ status: 429, headers: { 'retry-after': '600' } });
    await expect(writer({ maxWaitMs: 5_000, waits }).openOrUpdatePullRequest(leg(), 'b')).rejects.toThrow(/rate limit: waiting 600s would pass --max-wait/);
    expect(waits).toEqual([]);
    expect(gh.requests).toHaveLength(1);
  });

  it('a 403 that is no rate limit is an error, not a wait', () => {
    expect(rateLimitWaitMs({ status: 403, headers: {}, message: 'Resource not accessible by integration', errors: [] }, 0)).toBeNull();
    expect(rateLimitWaitMs({ status: 403, headers: {}, message: 'You have exceeded a secondary rate limit', errors: [] }, 0)).toBe(60_000);
  });

  it("GitHub's refusal is one line naming the status, never the token", async () => {
    gh.failNext({ status: 404, body: { message: 'Not Found' } });
    const err = await writer()
      .openOrUpdatePullRequest(leg(), 'b')
      .catch((e: Error) => e);
    expect(String(err)).toMatch(/GitHub 404 on GET \/repos\/acme\/shop\/pulls: Not Found/);
    expect(String(err)).not.toContain(TOKEN);
  });
});

describe('a GitHub that cannot be reached', () => {
  /** A writer aimed at `apiUrl`, whatever answers there. */
  const aimedAt = (apiUrl: string) => createGitHubWriter({ apiUrl, tokenFor: async () => TOKEN, remoteOf: async () => REMOTE, maxWaitMs: 1_000, redact });

  it('plain HTTP behind an https:// URL is a TLS failure naming the address, not "GitHub 500"', async () => {
    // gh.url is the stand-in's plain-HTTP address: spoken to as https, it answers no TLS handshake.
    const https = gh.url.replace(/^http:/, 'https:');
    const err = await aimedAt(https)
      .openOrUpdatePullRequest(leg(), 'b')
      .catch((e: Error) => e);
    expect((err as Error).message).toBe(`cannot reach ${https}/repos/acme/shop/pulls: TLS: wrong version number`);
    expect(gh.requests).toEqual([]);
  });

  it('is not retried: one connection, one failure', async () => {
    let connections = 0;
    // Whatever the client sends, plain text back: no TLS handshake.
    const plain = createServer((socket) => {
      connections++;
      socket.once('data', () => socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n'));
    });
    await new Promise<void>((r) => plain.listen(0, '127.0.0.1', () => r()));
    try {
      const url = `https://127.0.0.1:${(plain.address() as AddressInfo).port}`;
      const err = await aimedAt(url)
        .openOrUpdatePullRequest(leg(), 'b')
        .catch((e: Error) => e);
      expect((err as Error).message).toMatch(new RegExp(`^cannot reach ${url}/repos/acme/shop/pulls: TLS: `));
      expect(connections).toBe(1);
    } finally {
      plain.close();
    }
  });

  it('a closed port is "connection refused", naming the address', async () => {
    const closed = await startGitHubMock({ token: TOKEN });
    await closed.close();
    const err = await aimedAt(closed.url)
      .openOrUpdatePullRequest(leg(), 'b')
      .catch((e: Error) => e);
    expect((err as Error).message).toBe(`cannot reach ${closed.url}/repos/acme/shop/pulls: connection refused`);
    expect((err as Error).message).not.toContain('GitHub 500');
    expect((err as Error).message).not.toContain(TOKEN);
  });
});
