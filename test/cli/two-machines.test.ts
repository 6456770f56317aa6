// Work advances across machines through what they share (docs/dispatch.md, "Work advances"): the
// service and one git origin. Machine A implements a card with --push; machine B (another home,
// another clone of origin) skips it with the reason, and runs it again only with --rerun. No run
// writes the work item (the contract's update body has no status): its ETag does not change.
// An agent commits with no git identity configured anywhere, and in CI svc says once where the
// work goes without --push.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isolatedEnv, makeRepo, run, type CliEnv } from '../support/cli.js';
import { startTestService, type TestService } from '../support/service.js';
import { svcInProcess } from '../support/svc-in-process.js';

let s: TestService;
let origin: string;
beforeAll(async () => {
  s = await startTestService();
  origin = join(mkdtempSync(join(tmpdir(), 'svc-origin-')), 'origin.git');
  await run('git', ['clone', '-q', '--bare', await makeRepo(), origin]);
});
afterAll(async () => {
  await s.close();
});

const COMMIT = 'git -c user.name=a -c user.email=a@example.invalid commit -q --allow-empty -m "{key}: done"';

async function machine(extra: CliEnv = {}): Promise<{ repo: string; env: CliEnv }> {
  const repo = join(mkdtempSync(join(tmpdir(), 'svc-machine-')), 'repo');
  await run('git', ['clone', '-q', origin, repo]);
  return { repo, env: isolatedEnv({ SVC_BASE_URL: s.url, SVC_TOKEN: s.token, SVC_PROJECT: s.projectKey, ...extra }) };
}

const card = (title: string) => s.admin.createWorkItem({ projectKey: s.projectKey, kind: 'task', title, type: 'code' }).key;

describe('two machines sharing a service and an origin', () => {
  it('the second skips the card the first pushed, names why, and runs it with --rerun; the item is never written', async () => {
    const key = card('shared card');
    const before = await s.call('GET', `/work-items/${key}`);
    const a = await machine();
    const first = await svcInProcess(['run', key, '--push', '--agent-cmd', COMMIT, '--repo', a.repo], { env: a.env });
    expect(first.code, first.stderr).toBe(0);
    expect(await run('git', ['for-each-ref', '--format=%(refname)', `refs/heads/svc/${key}`], origin)).toBe(`refs/heads/svc/${key}\n`);
    const after = await s.call('GET', `/work-items/${key}`);
    expect(after.headers.etag).toBe(before.headers.etag);
    expect(after.body.status).toBe('todo');

    const b = await machine();
    const dry = await svcInProcess(['batch', '--dry-run', '--json', '--agent-cmd', COMMIT, '--repo', b.repo], { env: b.env });
    expect(dry.code, dry.stderr).toBe(0);
    const cards = (JSON.parse(dry.stdout) as { cards: { key: string; skipReason: string | null }[] }).cards;
    expect(cards.find((c) => c.key === key)?.skipReason).toBe(`implemented on origin/svc/${key}`);

    const again = await svcInProcess(['batch', '--rerun', '--json', '--agent-cmd', COMMIT, '--repo', b.repo], { env: b.env });
    expect(again.code, again.stderr).toBe(0);
    expect((JSON.parse(again.stdout) as { legs: { key: string }[] }).legs.map((l) => l.key)).toContain(key);
  });

  it('an origin that cannot be reached is one warning, and the selection goes on', async () => {
    const key = card('unreachable origin');
    const m = await machine();
    await run('git', ['remote', 'set-url', 'origin', join(tmpdir(), 'no-such-origin.git')], m.repo);
    const r = await svcInProcess(['batch', '--dry-run', '--json', '--agent-cmd', COMMIT, '--repo', m.repo], { env: m.env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr.split('\n').filter((l) => l.includes("could not read origin's svc/* branches"))).toHaveLength(1);
    expect((JSON.parse(r.stdout) as { cards: { key: string; skipReason: string | null }[] }).cards.find((c) => c.key === key)?.skipReason).toBeNull();
  });
});

describe('the git identity of agents’ commits', () => {
  // No identity anywhere: no global or system config, none in the repository.
  const bare = { GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' };
  const author = (repo: string, key: string) => run('git', ['log', '-1', '--format=%an <%ae>', `svc/${key}`], repo);

  it('a leg whose agent commits with no identity configured anywhere is implemented, as svc-agent', async () => {
    const key = card('no identity');
    const m = await machine(bare);
    const r = await svcInProcess(['run', key, '--agent-cmd', 'git commit -q --allow-empty -m "{key}: done"', '--repo', m.repo], { env: m.env });
    expect(r.code, r.stderr).toBe(0);
    expect(await author(m.repo, key)).toBe('svc-agent <svc-agent@localhost>\n');
  });

  it('--git-identity chooses it, and a malformed one is one line, exit 2', async () => {
    const key = card('chosen identity');
    const m = await machine(bare);
    const agent = 'git commit -q --allow-empty -m "{key}: done"';
    const r = await svcInProcess(['run', key, '--git-identity', 'Ann Agent <ann@example.com>', '--agent-cmd', agent, '--repo', m.repo], { env: m.env });
    expect(r.code, r.stderr).toBe(0);
    expect(await author(m.repo, key)).toBe('Ann Agent <ann@example.com>\n');
    const bad = await svcInProcess(['run', key, '--git-identity', 'ann@example.com', '--agent-cmd', agent, '--repo', m.repo], { env: m.env });
    expect([bad.code, bad.stderr]).toEqual([2, 'svc: --git-identity takes "Name <email>", as git writes an author; not "ann@example.com"\n']);
  });

  it('in CI without --push or --pr, svc says once that the work stays in the job', async () => {
    const key = card('ci');
    const m = await machine({ CI: 'true' });
    const r = await svcInProcess(['run', key, '--agent-cmd', COMMIT, '--repo', m.repo], { env: m.env });
    expect(r.code, r.stderr).toBe(0);
    // In CI the line carries no "warning:" label (no colour, no prefix): it is the line itself.
    expect(r.stderr.split('\n').filter((l) => l.includes('no --push or --pr'))).toEqual([
      expect.stringMatching(
        /CI is set and this run has no --push or --pr: implemented work stays on svc\/ branches in this job's workspace, which goes when the job ends$/,
      ),
    ]);
    const pushed = await svcInProcess(['run', card('ci pushed'), '--push', '--agent-cmd', COMMIT, '--repo', m.repo], { env: m.env });
    expect(pushed.code, pushed.stderr).toBe(0);
    expect(pushed.stderr).not.toContain('no --push or --pr');
  });
});
