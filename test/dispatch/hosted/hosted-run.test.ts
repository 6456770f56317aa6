// End to end: a hosted run against the real local service and its real git remote. The client
// reads its run with the run credential, trades it for git tokens, clones over HTTP through the
// credential helper (a separate process, as git starts it), a fake agent commits, the branch is
// pushed, the run closes, and a later push is refused. A scan then looks for any token anywhere.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError, createApiClient } from '../../../src/api/index.js';
import { isAuthFailure, prepareHostedExecution, type HostedExecution } from '../../../src/dispatch/hosted/index.js';
import { bareRef, filesUnder, git, hostedFixture, leaks, type HostedFixture } from '../../support/hosted.js';

let fixture: HostedFixture | undefined;
let hosted: HostedExecution | undefined;
afterEach(async () => {
  await hosted?.dispose();
  await fixture?.svc.close();
  hosted = undefined;
  fixture = undefined;
});

/** What the fake agent does in its clone: a branch, a file, a commit whose message starts with the key. */
async function agentCommits(dir: string, key: string, file: string): Promise<string> {
  const branch = `svc/${key}`;
  const exists = await git(dir, 'branch', '--list', branch);
  await git(dir, 'checkout', '--quiet', ...(exists ? [branch] : ['-b', branch]));
  await git(dir, 'commit', '--quiet', '--allow-empty', '-m', `${key}: ${file}`);
  return git(dir, 'rev-parse', 'HEAD');
}

describe('a hosted run end to end', () => {
  it('clones through the helper, pushes the leg branch, refuses a push after the close, and leaks no token', async () => {
    const f = (fixture = await hostedFixture({
      items: [
        { title: 'Add a widget', targetRepositories: ['acme/widgets'] },
        { title: 'Polish gadgets', targetRepo: 'acme/gadgets' },
      ],
    }));
    const h = (hosted = await prepareHostedExecution(f.env, { helperArgv: f.helperArgv, workspaceDir: f.workspaceDir }));

    // The run as its own credential reads it (getDispatchRun), with its cards' items (getWorkItem).
    expect(h.run.run.id).toBe(f.runId);
    expect(h.run.command).toBe('run');
    expect(h.run.run.origin).toBe('hosted');
    expect(h.cards.map((c) => c.card.workItemKey)).toEqual(f.keys);
    expect(h.repositories.map((r) => [r.repository, r.cloned])).toEqual([
      ['acme/widgets', true],
      ['acme/gadgets', true],
    ]);
    expect(h.broker.tradeCount).toBe(1);

    // Each clone has the seed commit, a plain remote URL, and our helper after a blank entry.
    const widgets = h.repoDirFor(f.keys[0]!)!;
    const gadgets = h.repoDirFor(f.keys[1]!)!;
    expect(widgets).toBe(join(f.workspaceDir, 'acme', 'widgets'));
    expect(readFileSync(join(widgets, 'README.md'), 'utf8')).toContain('acme/widgets');
    const remote = await git(widgets, 'remote', 'get-url', 'origin');
    expect(remote).toBe(`${f.svc.url}/git/acme/widgets.git`);
    const local = (await git(widgets, 'config', '--local', '--list')).split('\n');
    const helpers = local.filter((l) => l.startsWith('credential.helper='));
    expect(helpers[0]).toBe('credential.helper=');
    expect(helpers[1]).toContain('git-credential');
    expect(helpers).toHaveLength(2);
    expect(await git(widgets, 'config', '--local', '--get', 'credential.useHttpPath')).toBe('true');

    // The fake agent commits; the implemented leg's branch is pushed and lands in the bare repository.
    const head = await agentCommits(widgets, f.keys[0]!, 'widget');
    await h.pushBranch(widgets, `svc/${f.keys[0]}`);
    expect(await bareRef(f, 'acme/widgets', `refs/heads/svc/${f.keys[0]}`)).toBe(head);
    const gadgetHead = await agentCommits(gadgets, f.keys[1]!, 'gadget');
    await h.pushBranch(gadgets, `svc/${f.keys[1]}`);
    expect(await bareRef(f, 'acme/gadgets', `refs/heads/svc/${f.keys[1]}`)).toBe(gadgetHead);
    // One trade served the clones and both pushes: tokens are reused until they near expiry.
    expect(h.broker.tradeCount).toBe(1);

    // An event as the engine would append it, to scan the stored stream afterwards.
    await h.api.appendDispatchEvents(f.runId, {
      events: [{ workItemKey: f.keys[0]!, disposition: 'implemented', sessionBranch: `svc/${f.keys[0]}`, exitCode: 0, body: 'pushed' }],
    });

    // Close the run (closeDispatchRun with the run credential): its git tokens are revoked.
    const secretsBeforeClose = h.secrets();
    await h.api.closeDispatchRun(f.runId, { stopReason: 'completed', status: 'succeeded' });
    const late = await agentCommits(widgets, f.keys[0]!, 'after close');
    // Refused for want of a credential (the token is revoked, getGitCredential answers 409), never a prompt.
    const refused = await h.pushBranch(widgets, `svc/${f.keys[0]}`).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isAuthFailure(refused)).toBe(true);
    expect(await bareRef(f, 'acme/widgets', `refs/heads/svc/${f.keys[0]}`)).toBe(head);
    expect(late).not.toBe(head);

    // The remote answers a revoked token with 401 and a Basic challenge.
    const gitToken = secretsBeforeClose.find((s) => s.startsWith('ghs_'))!;
    const res = await fetch(`${f.svc.url}/git/acme/widgets.git/info/refs?service=git-receive-pack`, {
      headers: { authorization: `Basic ${Buffer.from(`x-access-token:${gitToken}`).toString('base64')}` },
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Basic/);

    // The scan: no git token or run credential in any file of the test's folders, in any argv or
    // environment the helper saw, or in any stored event.
    const secrets = [f.runToken, ...h.secrets()];
    expect(secrets.filter((s) => s.startsWith('ghs_')).length).toBeGreaterThan(0);
    for (const dir of [f.home, f.workspaceDir]) {
      for (const file of filesUnder(dir)) expect(leaks(file.text, secrets), file.path).toEqual([]);
    }
    const seen = readFileSync(f.argvLog, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { argv: string[]; env: Record<string, string> });
    expect(seen.length).toBeGreaterThan(0);
    for (const s of seen) {
      expect(leaks(s.argv.join('\0'), secrets)).toEqual([]);
      expect(leaks(JSON.stringify(s.env), secrets)).toEqual([]);
      expect(s.env.SVC_RUN_TOKEN).toBeUndefined();
      expect(s.env.EDITOR).toBeUndefined();
      expect(s.env.GIT_TERMINAL_PROMPT).toBe('0');
    }
    const events = f.svc.db.prepare('SELECT * FROM dispatch_events WHERE run_id = ?').all(f.runId);
    expect(events.length).toBeGreaterThan(0);
    expect(leaks(JSON.stringify(events), secrets)).toEqual([]);
  });

  it('refreshes a token that expires mid-run ahead of its expiry, without git failing', async () => {
    // One clock for the service (which mints and checks the tokens' expiry) and the broker; the
    // minute the token lives is never waited out, and no loaded machine's slow clone outlives it.
    let shift = 0;
    const now = () => Date.now() + shift;
    const f = (fixture = await hostedFixture({ config: { gitTokenTtlMs: 60_000 }, now: () => new Date(now()) }));
    const h = (hosted = await prepareHostedExecution(f.env, { helperArgv: f.helperArgv, workspaceDir: f.workspaceDir, now }));
    const dir = h.repositories[0]!.dir;
    const first = h.secrets().filter((s) => s.startsWith('ghs_'));
    expect(h.broker.tradeCount).toBe(1);

    // The clone's token expires while the agent works.
    shift += 62_000;
    const head = await agentCommits(dir, f.keys[0]!, 'slow work');
    await h.pushBranch(dir, `svc/${f.keys[0]}`);
    expect(await bareRef(f, 'acme/widgets', `refs/heads/svc/${f.keys[0]}`)).toBe(head);
    expect(h.broker.tradeCount).toBe(2);
    expect(h.secrets().filter((s) => s.startsWith('ghs_'))).not.toEqual(first);
  });

  it('refreshes after a 401 from git: the helper erases the refused token and the push goes through', async () => {
    const f = (fixture = await hostedFixture());
    const h = (hosted = await prepareHostedExecution(f.env, { helperArgv: f.helperArgv, workspaceDir: f.workspaceDir }));
    const dir = h.repositories[0]!.dir;
    // The server refuses a token the broker still believes in (revoked behind its back).
    f.svc.db.prepare('UPDATE git_tokens SET revoked_at = ? WHERE run_id = ?').run(new Date().toISOString(), f.runId);
    const head = await agentCommits(dir, f.keys[0]!, 'work');
    await h.pushBranch(dir, `svc/${f.keys[0]}`);
    expect(await bareRef(f, 'acme/widgets', `refs/heads/svc/${f.keys[0]}`)).toBe(head);
    expect(h.broker.tradeCount).toBe(2);
    const erased = readFileSync(f.argvLog, 'utf8')
      .split('\n')
      .filter((l) => l.includes('"erase"'));
    expect(erased.length).toBeGreaterThan(0);
  });

  it('answers operation 30 only to the run credential: a PAT is refused', async () => {
    const f = (fixture = await hostedFixture());
    const viaWire = await f.svc.call('POST', `/dispatch-runs/${f.runId}/git-credential`, { token: f.svc.token });
    expect(viaWire.status).toBe(403);
    const pat = createApiClient({ baseUrl: f.svc.url, token: f.svc.token });
    const err = await pat.getGitCredential(f.runId).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(403);
    await pat.close();
    const run = createApiClient({ baseUrl: f.svc.url, token: f.runToken, credentialKind: 'run' });
    const granted = await run.getGitCredential(f.runId);
    expect(granted.credentials.map((c) => c.repository)).toEqual(['acme/widgets']);
    expect(granted.credentials[0]!.url).not.toContain(granted.credentials[0]!.token);
    await run.close();
  });
});
