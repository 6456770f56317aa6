// The network of a hosted run's legs (docs/hosted.md, "Networking"; hostedNetwork in
// src/commands/hosted/run.ts): fenced by default through the pool, the allowlist the preset's hosts,
// the service, each clone's git host, every clone's `network: allow:` and svc attach's
// --allow-host; --network open honoured; a fence the kernel refuses is one line, exit 2.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { exitCodeOf } from '../../../src/commands/exit-codes.js';
import { hostedNetwork } from '../../../src/commands/hosted/run.js';
import { DEFAULT_POOL } from '../../../src/dispatch/boundary/user.js';
import { EMPTY_WORKFLOW } from '../../../src/dispatch/workflow/policy.js';
import { makeRepo } from '../../support/cli.js';
import { testContext } from '../../support/context.js';

async function clone(origin: string): Promise<string> {
  const dir = await makeRepo();
  execFileSync('git', ['-C', dir, 'remote', 'add', 'origin', origin]);
  return dir;
}

const probes = { nft: async () => null, sweep: async () => [] };

describe("a hosted run's legs", () => {
  it('are fenced through the pool, reaching the preset, the service, each git host and every workflow’s hosts', async () => {
    const [a, b] = [await clone('https://git.example.test/acme/a.git'), await clone('git@ssh.example.test:acme/b.git')];
    const ctx = testContext({ env: { SVC_BASE_URL: 'http://127.0.0.1:8787' } });
    const net = await hostedNetwork(
      ctx,
      { allowHost: ['pkg.example.test'] },
      {
        agent: { agent: 'claude' },
        workspaceDir: '/nonexistent',
        pool: DEFAULT_POOL,
        repoDirs: [a, b],
        workflows: { [a]: { ...EMPTY_WORKFLOW, networkAllow: ['*.cdn.test'] }, [b]: null },
        probes,
      },
    );
    expect(net.network).toEqual({
      mode: 'fenced',
      allow: ['api.anthropic.com', 'statsig.anthropic.com', '*.cdn.test', 'pkg.example.test', '127.0.0.1:8787', 'git.example.test:443', 'ssh.example.test:22'],
    });
    expect(net.line).toMatch(
      /^network: fenced \(legs reach .*127\.0\.0\.1:8787, git\.example\.test:443, ssh\.example\.test:22; nftables rules per agent uid\)$/,
    );
  });

  it('the local service as the git host is one entry; svc attach --network open opens them', async () => {
    const a = await clone('http://127.0.0.1:8787/git/acme/a.git');
    const ctx = testContext({ env: { SVC_BASE_URL: 'http://127.0.0.1:8787' } });
    const input = { agent: { agentCmd: 'true' }, workspaceDir: '/nonexistent', pool: DEFAULT_POOL, repoDirs: [a], workflows: {}, probes };
    expect((await hostedNetwork(ctx, {}, input)).line).toBe('network: fenced (legs reach 127.0.0.1:8787; nftables rules per agent uid)');
    expect((await hostedNetwork(ctx, { network: 'open' }, input)).network).toEqual({ mode: 'open', allow: [] });
  });

  it('a fence the kernel refuses (a runner without NET_ADMIN) is one line, exit 2', async () => {
    const ctx = testContext({ env: { SVC_BASE_URL: 'http://127.0.0.1:8787' } });
    const error = await hostedNetwork(
      ctx,
      {},
      {
        agent: { agentCmd: 'true' },
        workspaceDir: '/nonexistent',
        pool: DEFAULT_POOL,
        repoDirs: [],
        workflows: {},
        probes: { ...probes, nft: async () => 'nft: Operation not permitted' },
      },
    ).catch((e: Error) => e);
    expect((error as Error).message).toBe(
      'default: fenced needs nftables rules, which this machine refused (nft: Operation not permitted); install nftables or use --network open',
    );
    expect(exitCodeOf({ error })).toBe(2);
  });
});
