// The engine's existing-run mode on a hosted run, in process against the local service with its
// git remote: no open and no heartbeat, a worktree per card in the card's clone, the branch pushed
// (a refused push fails the leg), a crashed earlier attempt resumed from its journal, `svc runs
// recover` over a hosted run's state folder with the run credential, and the CLI's hosted path
// (a dispatch command whose name differs from the run's says so and follows the run).
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../../src/api/index.js';
import type { DispatchEventInput } from '../../../src/contract/types.js';
import { runDispatchCommand } from '../../../src/commands/dispatch/run-dispatch.js';
import { dispatchServiceOf } from '../../../src/dispatch/wire/service.js';
import { prepareHostedExecution, type HostedExecution } from '../../../src/dispatch/hosted/index.js';
import { Journal } from '../../../src/dispatch/wire/journal.js';
import { Interrupted } from '../../../src/dispatch/signals.js';
import { dispatchDeps } from '../../../src/dispatch/lifecycle/deps.js';
import { runExistingRun } from '../../../src/dispatch/lifecycle/existing-run.js';
import type { DispatchDeps, DispatchOptions } from '../../../src/dispatch/lifecycle/types.js';
import { recoverRuns } from '../../../src/dispatch/state/recover.js';
import { createRunFolder, readRunRecord, runPaths } from '../../../src/dispatch/state/folder.js';
import { repositoryPath } from '../../../src/server/git/index.js';
import { testContext } from '../../support/context.js';
import { bareRef, filesUnder, git, hostedFixture, leaks, type HostedFixture } from '../../support/hosted.js';

const COMMIT =
  'sh -c "echo $SVC_CARD_KEY > card-$SVC_CARD_KEY.txt && git add -A && git -c user.name=agent -c user.email=agent@example.invalid commit -qm \\"$SVC_CARD_KEY: done\\""';

let fixture: HostedFixture | undefined;
let hosted: HostedExecution | undefined;
afterEach(async () => {
  await hosted?.dispose();
  await fixture?.svc.close();
  hosted = undefined;
  fixture = undefined;
});

/**
 * What an earlier attempt at the fixture's hosted run left when it was killed: its state folder in
 * `stateDir`, for the cards `keys`, with a journal of `events` that never reached the service.
 */
function leftOpen(stateDir: string, f: HostedFixture, keys: string[], events: DispatchEventInput[]) {
  const paths = createRunFolder(stateDir, {
    runId: f.runId,
    baseUrl: f.svc.url,
    projectKey: f.svc.projectKey,
    command: 'run',
    originalCommand: 'run',
    scopeKey: null,
    baseSeq: 0,
    openedAt: new Date().toISOString(),
    cards: keys.map((workItemKey) => ({ workItemKey })),
    options: { origin: 'hosted' },
  });
  const journal = Journal.open(paths.journal);
  for (const event of events) journal.append(event);
  journal.close();
  return paths;
}

interface Seen {
  lines: string[];
  stateDir: string;
}

function engine(f: HostedFixture, h: HostedExecution, over: Partial<DispatchOptions> = {}): { opts: DispatchOptions; deps: DispatchDeps; seen: Seen } {
  const stateDir = join(f.home, 'state');
  const seen: Seen = { lines: [], stateDir };
  const only = h.repositories.length === 1 ? h.repositories[0]!.dir : null;
  const opts: DispatchOptions = {
    command: 'run',
    keys: [],
    projectKey: f.svc.projectKey,
    baseUrl: f.svc.url,
    repo: f.workspaceDir,
    agent: { agentCmd: COMMIT },
    onFailure: 'halt',
    parallel: 1,
    sendLogs: true,
    allowEmpty: false,
    timeouts: { idleMs: 30_000, cardMs: 60_000, killGraceMs: 500, runMs: null, flushMs: 5_000 },
    heartbeat: false,
    heartbeatIntervalMs: 50,
    worktree: true,
    dryRun: false,
    push: true,
    secrets: [f.runToken],
    liveSecrets: () => h.secrets(),
    env: { PATH: process.env.PATH, GIT_TERMINAL_PROMPT: '0' },
    flushIntervalMs: 30,
    ...over,
  };
  const deps = dispatchDeps({
    service: dispatchServiceOf(h.api),
    stateDir,
    output: {
      legStarted: (l) => seen.lines.push(`start ${l.key}`),
      legFinished: (l) => seen.lines.push(`end ${l.key} ${l.disposition} ${l.reason ?? ''}`),
      info: (m) => seen.lines.push(`info ${m}`),
      warn: (m) => seen.lines.push(`warn ${m}`),
    },
    signal: new AbortController().signal,
    repoFor: (key) => h.repoDirFor(key) ?? only,
    pushBranch: (repo, branch) => h.pushBranch(repo, branch),
  });
  return { opts, deps, seen };
}

/** The run as its operator reads it (PAT): the run credential dies with the run. */
const runOf = async (f: HostedFixture) => (await f.svc.call('GET', `/dispatch-runs/${f.runId}`)).body as import('../../../src/contract/types.js').DispatchRun;

describe('the engine on an existing hosted run', () => {
  it('runs the queued legs in their clones, pushes each branch, sends no heartbeat and closes with the run credential', async () => {
    const f = (fixture = await hostedFixture({
      items: [
        { title: 'Add a widget', targetRepositories: ['acme/widgets'] },
        { title: 'Polish gadgets', targetRepo: 'acme/gadgets' },
      ],
    }));
    const h = (hosted = await prepareHostedExecution(f.env, { helperArgv: f.helperArgv, workspaceDir: f.workspaceDir }));
    const { opts, deps, seen } = engine(f, h);
    let beats = 0;
    deps.service = { ...deps.service, heartbeatDispatchRun: async () => void beats++ };
    const s = await runExistingRun(opts, deps, { run: h.run.run, items: h.cards.map((c) => c.item) });
    expect(s, seen.lines.join('\n')).toMatchObject({ runId: f.runId, command: 'run', stopReason: 'completed', status: 'succeeded', exitCode: 0 });
    expect(s.legs.map((l) => [l.key, l.disposition])).toEqual(f.keys.map((k) => [k, 'implemented']));
    expect(beats).toBe(0);

    // One worktree per card inside its repository's clone; the branch is in the bare repository.
    for (const [key, repository] of [
      [f.keys[0]!, 'acme/widgets'],
      [f.keys[1]!, 'acme/gadgets'],
    ] as const) {
      const clone = join(f.workspaceDir, ...repository.split('/'));
      const worktree = join(clone, '.git', 'svc-worktrees', key);
      expect(readFileSync(join(worktree, `card-${key}.txt`), 'utf8').trim()).toBe(key);
      expect(await bareRef(f, repository, `refs/heads/svc/${key}`)).toBe(await git(clone, 'rev-parse', `refs/heads/svc/${key}`));
    }
    const run = await runOf(f);
    expect(run).toMatchObject({ status: 'succeeded', stopReason: 'completed', lastHeartbeatAt: null });

    // run.json: the options of the run, marked hosted, never a token.
    const record = readRunRecord(seen.stateDir, f.runId)!;
    expect(record.options).toMatchObject({ origin: 'hosted', push: true, agent: { agentCmd: COMMIT }, onFailure: 'halt', parallel: 1 });
    const secrets = [f.runToken, ...h.secrets()];
    for (const file of filesUnder(seen.stateDir)) expect(leaks(file.text, secrets), file.path).toEqual([]);
  });

  it('a refused push fails the leg with one line "push failed: …" and no token; the run halts', async () => {
    const f = (fixture = await hostedFixture());
    // The remote cannot write svc/KEY: a ref below that name already exists (git's D/F conflict).
    const bare = repositoryPath(f.gitRoot, 'acme/widgets');
    await git(bare, 'update-ref', `refs/heads/svc/${f.keys[0]}/blocker`, 'refs/heads/main');
    const h = (hosted = await prepareHostedExecution(f.env, { helperArgv: f.helperArgv, workspaceDir: f.workspaceDir }));
    const { opts, deps, seen } = engine(f, h);
    const s = await runExistingRun(opts, deps, { run: h.run.run, items: h.cards.map((c) => c.item) });
    expect(s, seen.lines.join('\n')).toMatchObject({ stopReason: 'halted', status: 'failed', exitCode: 1 });
    const leg = s.legs[0]!;
    expect(leg.disposition).toBe('failed');
    expect(leg.reason).toMatch(/^push failed: /);
    expect(leg.reason).not.toContain('\n');
    expect(leaks(leg.reason!, [f.runToken, ...h.secrets()])).toEqual([]);
    expect(await bareRef(f, 'acme/widgets', `refs/heads/svc/${f.keys[0]}`)).toBeNull();
    expect((await runOf(f)).cards[0]).toMatchObject({ disposition: 'failed' });
  });

  it('--no-push: the leg is implemented and nothing is pushed', async () => {
    const f = (fixture = await hostedFixture());
    const h = (hosted = await prepareHostedExecution(f.env, { helperArgv: f.helperArgv, workspaceDir: f.workspaceDir }));
    const { opts, deps } = engine(f, h, { push: false });
    const s = await runExistingRun(opts, deps, { run: h.run.run, items: h.cards.map((c) => c.item) });
    expect(s).toMatchObject({ stopReason: 'completed', status: 'succeeded' });
    expect(await bareRef(f, 'acme/widgets', `refs/heads/svc/${f.keys[0]}`)).toBeNull();
  });

  it('resumes after a crashed attempt: undelivered events are sent first, a landed leg is not run again', async () => {
    const f = (fixture = await hostedFixture({
      items: [
        { title: 'First', targetRepositories: ['acme/widgets'] },
        { title: 'Second', targetRepositories: ['acme/widgets'] },
      ],
    }));
    const h = (hosted = await prepareHostedExecution(f.env, { helperArgv: f.helperArgv, workspaceDir: f.workspaceDir }));
    const { opts, deps, seen } = engine(f, h);
    // What a killed earlier attempt left: its state folder, and a journal whose last two events
    // (the first leg ran and was implemented) never reached the service.
    const [a, b] = f.keys as [string, string];
    const paths = leftOpen(
      seen.stateDir,
      f,
      [a, b],
      [
        { workItemKey: a, disposition: 'running', sessionBranch: `svc/${a}` },
        { workItemKey: a, disposition: 'implemented', sessionBranch: `svc/${a}`, exitCode: 0 },
      ],
    );
    expect(h.run.cards.map((c) => c.disposition)).toEqual(['queued', 'queued']);

    const s = await runExistingRun(opts, deps, { run: h.run.run, items: h.cards.map((c) => c.item) });
    expect(s, seen.lines.join('\n')).toMatchObject({ stopReason: 'completed', status: 'succeeded' });
    expect(s.legs.map((l) => l.key)).toEqual([b]);
    const run = await runOf(f);
    expect(run.cards.map((c) => [c.workItemKey, c.disposition])).toEqual([
      [a, 'implemented'],
      [b, 'implemented'],
    ]);
    // Two earlier events and this attempt's two (running, implemented), each stored once.
    expect(run.seq).toBe(4);
    const reopened = Journal.open(paths.journal);
    expect(reopened.closed).toBe(true);
    reopened.close();
  });

  it('svc runs recover closes a hosted run left open, with the run credential', async () => {
    const f = (fixture = await hostedFixture());
    const stateDir = mkdtempSync(join(tmpdir(), 'svc-hosted-recover-'));
    leftOpen(stateDir, f, [f.keys[0]!], [{ workItemKey: f.keys[0]!, disposition: 'running', sessionBranch: `svc/${f.keys[0]}` }]);
    const client = createApiClient({ baseUrl: f.svc.url, token: f.runToken, credentialKind: 'run' });
    try {
      const results = await recoverRuns({ stateDir, serviceFor: () => dispatchServiceOf(client), output: { info: () => undefined, warn: () => undefined } });
      expect(results).toEqual([expect.objectContaining({ runId: f.runId, action: 'closed', sent: 1, stopReason: 'interrupted', status: 'cancelled' })]);
    } finally {
      await client.close();
    }
  });

  it('a dispatch command inside a hosted container follows the run, and says so when its name differs', async () => {
    const f = (fixture = await hostedFixture());
    const ctx = testContext({
      env: { ...f.env, SVC_REPO: f.workspaceDir, GIT_AUTHOR_NAME: 'svc', GIT_AUTHOR_EMAIL: 'svc@example.invalid' },
      globals: { json: true },
    });
    await runDispatchCommand({ command: 'batch', keys: [], agentCmd: COMMIT, onFailure: 'halt' }, ctx);
    expect(ctx.stderr.text).toContain(`svc batch inside hosted run ${f.runId}: the run's command is run; following the run`);
    const summary = JSON.parse(ctx.stdout.text);
    expect(summary).toMatchObject({ runId: f.runId, command: 'run', stopReason: 'completed', status: 'succeeded' });
    expect(ctx.exitCode).toBe(0);
    expect(await bareRef(f, 'acme/widgets', `refs/heads/svc/${f.keys[0]}`)).not.toBeNull();
    expect(leaks(ctx.stdout.text + ctx.stderr.text, [f.runToken])).toEqual([]);
    expect(runPaths(join(f.home, 'state'), f.runId).dir).toBeTruthy();
  });

  it('an interrupted hosted run stops its agent, still closes interrupted/cancelled with the run credential, exit 130', async () => {
    const f = (fixture = await hostedFixture());
    const ctx = testContext({ env: { ...f.env, SVC_REPO: f.workspaceDir }, globals: { json: true } });
    const done = runDispatchCommand({ command: 'run', keys: [], agentCmd: 'sleep 30', killGrace: '1s', onFailure: 'halt' }, ctx);
    for (let i = 0; i < 200 && (await runOf(f)).cards[0]?.disposition !== 'running'; i++) await new Promise((r) => setTimeout(r, 50));
    ctx.abort.abort(new Interrupted('SIGINT'));
    await done;
    expect(ctx.exitCode).toBe(130);
    const run = await runOf(f);
    expect(run).toMatchObject({ status: 'cancelled', stopReason: 'interrupted', lastHeartbeatAt: null });
    expect(run.cards[0]).toMatchObject({ disposition: 'failed' });
    expect(JSON.parse(ctx.stdout.text)).toMatchObject({ runId: f.runId, stopReason: 'interrupted', status: 'cancelled', exitCode: 130 });
  }, 30_000);
});
