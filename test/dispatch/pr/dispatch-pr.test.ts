// `--pr` through the engine: the real local service, real git (a bare remote behind a github.com
// fetch URL), the real agent runner; pull requests go to the local GitHub stand-in (REST, as a
// hosted run writes them) or to a stand-in `gh` that records its argv (as a local run does).
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runDispatch } from '../../../src/dispatch/lifecycle/dispatch.js';
import { createGhWriter } from '../../../src/dispatch/pr/gh.js';
import { createGitHubWriter } from '../../../src/dispatch/pr/github.js';
import { pullRequestsFile } from '../../../src/dispatch/pr/after-leg.js';
import { createRedactor } from '../../../src/dispatch/redact.js';
import { runPaths } from '../../../src/dispatch/state/folder.js';
import { run } from '../../support/cli.js';
import { copyRepoWithOrigin } from '../../support/git-remote.js';
import { startHarness, type Harness } from '../../support/engine.js';
import { startGitHubMock, type GitHubMock } from './github-mock.js';

const GH_TOKEN = 'ghs_' + 'Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2';
const FAKE_GH = resolve(import.meta.dirname, 'fake-gh.mjs');
/** Commits, then says its last words with both tokens in them. */
const agent = (h: Harness) =>
  `sh -c "echo x >> card-$SVC_CARD_KEY.txt && git add -A && git -c user.name=a -c user.email=a@example.invalid commit -qm \\"$SVC_CARD_KEY: cart\\" && echo Implemented the cart with ${h.svc.token} and ${GH_TOKEN}."`;

let h: Harness;
let gh: GitHubMock;
beforeEach(async () => {
  // origin is a bare repository on disk (nothing may reach github.com); the writers are told it
  // stands for github.com/acme/shop, as `originOf` would read a real remote (test/dispatch/pr/remote.test.ts).
  // The pair is copied from one built once per file.
  h = await startHarness({ repo: (await copyRepoWithOrigin()).repo });
  gh = await startGitHubMock({ token: GH_TOKEN });
});
afterEach(async () => {
  await gh.close();
  await h.close();
});

const REMOTE = { host: 'github.com', owner: 'acme', name: 'shop', webUrl: 'https://github.com/acme/shop' };
const remoteOf = async () => REMOTE;
/** The pull request's head on the remote (fix and review work on it, fetched from origin). */
const headOnRemote = (key: string) => run('git', ['push', '-q', 'origin', `main:refs/heads/svc/${key}`], h.repo);
/**
 * A card "Review me" delivered as the open pull request `pull` of acme/shop (its CI failing), its
 * session branch on the remote: what review and fix work on.
 */
async function cardInReview(pull: { number: number; title: string; url: string }): Promise<string> {
  const delivery = { repo: 'acme/shop', ...pull, state: 'open', ci: 'failing', baseRef: 'main', defaultBranch: 'main' };
  const key = h.item('task', 'Review me', { deliveries: [delivery] } as never);
  await headOnRemote(key);
  return key;
}
const pushBranch = async (repo: string, branch: string) =>
  void (await run('git', ['push', '-q', '-f', 'origin', `refs/heads/${branch}:refs/heads/${branch}`], repo));
const restWriter = () =>
  createGitHubWriter({ apiUrl: gh.url, tokenFor: async () => GH_TOKEN, remoteOf, maxWaitMs: 10_000, redact: createRedactor([h.svc.token, GH_TOKEN]) });
const eventBodies = (runId: string) =>
  (h.svc.db.prepare('SELECT body FROM dispatch_events WHERE run_id = ? AND body IS NOT NULL ORDER BY seq').all(runId) as Array<{ body: string }>).map(
    (r) => r.body,
  );

describe('--pr over GitHub REST', () => {
  it('opens one pull request, updates it on a second run; URL in the summary, the event stream and the local state; no token anywhere', async () => {
    const key = h.item('task', 'Add a cart');
    const opts = h.opts({ keys: [key], push: true, pr: true, secrets: [h.svc.token, GH_TOKEN], agent: { agentCmd: agent(h) } });
    const first = await runDispatch(opts, h.deps({ pushBranch, pullRequests: restWriter() }));
    expect(first.legs[0]).toMatchObject({
      disposition: 'implemented',
      pullRequest: { action: 'opened', number: 1, url: 'https://github.example.test/acme/shop/pull/1' },
    });
    const second = await runDispatch(opts, h.deps({ pushBranch, pullRequests: restWriter() }));
    expect(second.legs[0]).toMatchObject({ disposition: 'implemented', pullRequest: { action: 'updated', number: 1 } });

    expect(gh.pulls('acme/shop')).toHaveLength(1);
    const pr = gh.pulls('acme/shop')[0]!;
    expect(pr).toMatchObject({ head: `svc/${key}`, base: 'main', title: `${key}: Add a cart` });
    for (const part of [key, 'Add a cart', second.runId!, 'svc run', 'Implemented the cart with [REDACTED]']) expect(pr.body).toContain(part);
    expect(gh.requests.map((r) => `${r.method} ${r.path}`).filter((c) => c.startsWith('POST'))).toEqual(['POST /repos/acme/shop/pulls']);

    expect(eventBodies(first.runId!)).toEqual(['pull request opened: https://github.example.test/acme/shop/pull/1']);
    expect(eventBodies(second.runId!)).toEqual(['pull request updated: https://github.example.test/acme/shop/pull/1']);
    const local = readFileSync(pullRequestsFile(runPaths(h.stateDir, second.runId!).dir), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(local).toEqual([expect.objectContaining({ key, action: 'updated', url: 'https://github.example.test/acme/shop/pull/1', number: 1 })]);
    expect(h.seen).toContain(`info ${key}: pull request opened: https://github.example.test/acme/shop/pull/1`);

    const wire = gh.requests.map((r) => r.rawBody).join('\n');
    expect(wire).not.toContain(GH_TOKEN);
    expect(wire).not.toContain(h.svc.token);
    expect(JSON.stringify(first) + JSON.stringify(second)).not.toContain(GH_TOKEN);
  });

  it('without a push there is no pull request; a GitHub failure is a warning and the leg stays implemented', async () => {
    const key = h.item('task', 'Add a cart');
    const none = await runDispatch(h.opts({ keys: [key], pr: true }), h.deps({ pullRequests: restWriter() }));
    expect(none.legs[0]).toMatchObject({ disposition: 'implemented', pullRequest: null });
    expect(gh.requests).toEqual([]);
    gh.failNext({ status: 403, body: { message: 'Resource not accessible by integration' } });
    const refused = await runDispatch(h.opts({ keys: [key], push: true, pr: true }), h.deps({ pushBranch, pullRequests: restWriter() }));
    expect(refused).toMatchObject({ status: 'succeeded', exitCode: 0 });
    expect(refused.legs[0]).toMatchObject({ disposition: 'implemented', pullRequest: null });
    expect(h.seen).toContain(
      `warn ${key}: pull request: GitHub 403 on GET /repos/{owner}/{repo}/pulls: Resource not accessible by integration`.replace('{owner}/{repo}', 'acme/shop'),
    );
  });

  it('review posts its text as a COMMENT review on the delivery; fix comments with what it changed', async () => {
    const open = gh.addPull('acme/shop', { head: 'feature', base: 'main', title: 'feature', body: '', draft: false });
    const key = await cardInReview({ number: open.number, title: 'feature', url: `https://github.example.test/acme/shop/pull/${open.number}` });
    const review = await runDispatch(
      h.opts({
        command: 'review',
        keys: [key],
        pr: true,
        secrets: [h.svc.token, GH_TOKEN],
        agent: { agentCmd: `sh -c "echo Looks right, but ${GH_TOKEN} is hard-coded."` },
      }),
      h.deps({ pullRequests: restWriter() }),
    );
    expect(review.legs[0]).toMatchObject({ pullRequest: { action: 'reviewed', number: open.number } });
    expect(gh.reviews).toHaveLength(1);
    expect(gh.reviews[0]).toMatchObject({ number: open.number, event: 'COMMENT' });
    expect(gh.reviews[0]!.body).toContain('Looks right, but [REDACTED] is hard-coded.');

    const fix = await runDispatch(
      h.opts({ command: 'fix', keys: [key], push: true, pr: true, agent: { agentCmd: agent(h) } }),
      h.deps({ pushBranch, pullRequests: restWriter() }),
    );
    expect(fix.legs[0]).toMatchObject({ disposition: 'implemented', pullRequest: { action: 'commented', number: open.number } });
    expect(gh.comments).toHaveLength(1);
    expect(gh.comments[0]!.body).toMatch(new RegExp(`- [0-9a-f]{7,} ${key}: cart`));
    expect(gh.requests.map((r) => r.rawBody).join('\n')).not.toContain(GH_TOKEN);
  });
});

describe('--pr through gh (local runs)', () => {
  const ghWriter = (dir: string, ghPath = FAKE_GH, loggedIn = true, remote = REMOTE) =>
    createGhWriter({
      gh: ghPath,
      remoteOf: async () => remote,
      env: { PATH: process.env.PATH, FAKE_GH_DIR: dir, FAKE_GH_LOGGED_IN: loggedIn ? '1' : '0', SVC_TOKEN: h.svc.token },
      redact: createRedactor([h.svc.token, GH_TOKEN]),
    });
  const calls = (dir: string) =>
    readFileSync(join(dir, 'calls.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { argv: string[]; body: string | null; bodyFile: string | null; bodyMode: string | null; env: string[] });

  it("gh pr create, then gh pr edit; bodies only through --body-file; no token in argv, body or gh's environment", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-fake-gh-'));
    const key = h.item('task', 'Add a cart');
    const opts = h.opts({ keys: [key], push: true, pr: true, draft: true, secrets: [h.svc.token, GH_TOKEN], agent: { agentCmd: agent(h) } });
    const first = await runDispatch(opts, h.deps({ pushBranch, pullRequests: ghWriter(dir) }));
    expect(first.legs[0]).toMatchObject({ pullRequest: { action: 'opened', number: 1, url: 'https://github.com/acme/shop/pull/1' } });
    const second = await runDispatch(opts, h.deps({ pushBranch, pullRequests: ghWriter(dir) }));
    expect(second.legs[0]).toMatchObject({ pullRequest: { action: 'updated', number: 1 } });
    const c = calls(dir);
    expect(c.map((x) => x.argv.slice(0, 2).join(' '))).toEqual(['auth status', 'pr list', 'pr create', 'auth status', 'pr list', 'pr edit']);
    const create = c[2]!.argv;
    expect(create).toEqual(
      expect.arrayContaining(['--repo', 'github.com/acme/shop', '--head', `svc/${key}`, '--title', `${key}: Add a cart`, '--draft', '--body-file']),
    );
    expect(c[2]!.body).toContain('Implemented the cart with [REDACTED]');
    for (const x of c) {
      expect(x.argv.join(' ')).not.toMatch(/Implemented the cart|ghs_|svc_pat_|svc_run_/);
      expect(x.body ?? '').not.toContain(GH_TOKEN);
      expect(x.body ?? '').not.toContain(h.svc.token);
      expect(x.env).toEqual([]);
      // The body file was private and is gone once gh returned.
      if (x.bodyFile) {
        expect(x.bodyMode).toBe('600');
        expect(existsSync(x.bodyFile)).toBe(false);
      }
    }
    expect(c.filter((x) => x.bodyFile)).toHaveLength(2);
  });

  it('review through gh: gh pr review --comment with the text in a file; fix: gh pr comment', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-fake-gh-'));
    const delivery = { number: 4, title: 'f', url: 'https://github.com/acme/shop/pull/4' };
    const key = await cardInReview(delivery);
    const review = await runDispatch(
      h.opts({ command: 'review', keys: [key], pr: true, secrets: [h.svc.token, GH_TOKEN], agent: { agentCmd: `sh -c "echo Solid. ${GH_TOKEN}"` } }),
      h.deps({ pullRequests: ghWriter(dir) }),
    );
    expect(review.legs[0]).toMatchObject({ pullRequest: { action: 'reviewed', number: 4, url: delivery.url } });
    const fix = await runDispatch(
      h.opts({ command: 'fix', keys: [key], push: true, pr: true, agent: { agentCmd: agent(h) } }),
      h.deps({ pushBranch, pullRequests: ghWriter(dir) }),
    );
    expect(fix.legs[0]).toMatchObject({ pullRequest: { action: 'commented', number: 4, url: 'https://github.com/acme/shop/pull/4#issuecomment-1' } });
    const c = calls(dir).filter((x) => x.argv[0] === 'pr');
    expect(c.map((x) => x.argv.slice(0, 4))).toEqual([
      ['pr', 'review', '4', '--repo'],
      ['pr', 'comment', '4', '--repo'],
    ]);
    expect(c[0]!.argv).toContain('--comment');
    expect(c[0]!.argv).not.toContain('--approve');
    expect(c[0]!.body).toContain('Solid. [REDACTED]');
    expect(c[1]!.body).toContain(`${key}: cart`);
    for (const x of c) expect(x.argv.join(' ')).not.toMatch(/Solid|ghs_/);
  });

  it('no gh, or gh not logged in: a one-line hint with the compare URL, and the leg is still implemented', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-fake-gh-'));
    const key = h.item('task', 'Add a cart');
    for (const writer of [ghWriter(dir, join(dir, 'no-such-gh')), ghWriter(dir, FAKE_GH, false)]) {
      const s = await runDispatch(h.opts({ keys: [key], push: true, pr: true }), h.deps({ pushBranch, pullRequests: writer }));
      expect(s.legs[0]).toMatchObject({
        disposition: 'implemented',
        pullRequest: { action: 'hint', url: `https://github.com/acme/shop/compare/svc/${key}?expand=1` },
      });
    }
    expect(h.seen.filter((l) => l.includes('open the pull request at'))).toHaveLength(2);
  });

  it('a remote that is not GitHub gets a hint without a GitHub link', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-fake-gh-'));
    const key = h.item('task', 'Add a cart');
    const gitlab = { host: 'gitlab.example.org', owner: 'acme', name: 'shop', webUrl: 'https://gitlab.example.org/acme/shop' };
    const s = await runDispatch(h.opts({ keys: [key], push: true, pr: true }), h.deps({ pushBranch, pullRequests: ghWriter(dir, FAKE_GH, false, gitlab) }));
    expect(s.legs[0]).toMatchObject({ disposition: 'implemented', pullRequest: { action: 'hint', url: null } });
    expect(h.seen).toContain(`info ${key}: gitlab.example.org is not a GitHub host gh is logged in to; open a pull request for svc/${key} there`);
  });
});
