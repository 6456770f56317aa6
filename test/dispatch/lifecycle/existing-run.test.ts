// The engine's existing-run mode (hosted runs) against the local service, `continue` taking the
// original run's options from run.json, and redaction of secrets that appear mid-run.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { continueFlags } from '../../../src/commands/dispatch/continue-flags.js';
import { runDispatchCommand } from '../../../src/commands/dispatch/run-dispatch.js';
import type { DispatchRun, WorkItemDetail } from '../../../src/contract/types.js';
import { runExistingRun, selectionOfRun } from '../../../src/dispatch/lifecycle/existing-run.js';
import { logPath, readRunRecord, runPaths } from '../../../src/dispatch/state/folder.js';
import { testContext } from '../../support/context.js';
import { engineEachTest } from '../../support/engine.js';

const h = engineEachTest();

async function openRun(cards: Array<{ workItemKey: string; skipReason?: string }>, extra: Record<string, unknown> = {}): Promise<DispatchRun> {
  const opened = await h.service.openDispatchRun({ projectKey: h.svc.projectKey, command: 'run', origin: 'hosted', cards, ...extra });
  return opened.run;
}

describe('selectionOfRun', () => {
  it('takes the legs still queued or running in order, orders blockers inside the run, gates behind a human card', async () => {
    const human = h.item('task', 'human', { executor: 'human' });
    const a = h.item('task', 'A');
    const b = h.item('task', 'B');
    const c = h.item('task', 'C');
    h.svc.admin.addLink(human, c, 'blocks');
    h.svc.admin.addLink(a, b, 'blocks');
    const run = await openRun([{ workItemKey: human, skipReason: 'executor: human' }, { workItemKey: a }, { workItemKey: b }, { workItemKey: c }]);
    const items = new Map<string, WorkItemDetail>();
    for (const k of [a, b, c]) items.set(k, await h.service.getWorkItem(k));
    const s = selectionOfRun(run, items);
    expect(s.cards.map((x) => [x.key, x.after, x.gatedBy])).toEqual([
      [a, [], null],
      [b, [a], null],
      [c, [], human],
    ]);
    expect(s).toMatchObject({ command: 'run', originalCommand: 'run', mode: 'implement', closeOut: false, empty: false });
  });

  it('a scoped run_scope run closes out; review runs in review mode', () => {
    const base: Omit<DispatchRun, 'command' | 'scopeWorkItemId' | 'scopeLabel'> = {
      id: 'r',
      projectId: 'p',
      origin: 'hosted',
      status: 'running',
      stopReason: null,
      agent: null,
      model: null,
      startedAt: '',
      endedAt: null,
      lastHeartbeatAt: null,
      createdById: null,
      agentInstance: null,
      cards: [],
      seq: 0,
    };
    expect(selectionOfRun({ ...base, command: 'run_scope', scopeWorkItemId: 'w', scopeLabel: 'PROJ-1' }, new Map())).toMatchObject({
      scopeKey: 'PROJ-1',
      closeOut: true,
      empty: true,
    });
    expect(selectionOfRun({ ...base, command: 'review', scopeWorkItemId: null, scopeLabel: null }, new Map())).toMatchObject({
      mode: 'review',
      closeOut: false,
    });
  });
});

describe('runExistingRun', () => {
  it('runs an open run without opening one and without heartbeats, and skips legs already implemented', async () => {
    const a = h.item('task', 'A');
    const b = h.item('task', 'B');
    const run = await openRun([{ workItemKey: a }, { workItemKey: b }]);
    await h.service.appendDispatchEvents(run.id, { events: [{ workItemKey: a, disposition: 'implemented', sessionBranch: `svc/${a}`, exitCode: 0 }] });
    let opens = 0;
    let beats = 0;
    const deps = h.deps({
      service: { ...h.service, openDispatchRun: async (body) => (opens++, h.service.openDispatchRun(body)), heartbeatDispatchRun: async () => void beats++ },
    });
    const s = await runExistingRun(h.opts({ heartbeat: false, heartbeatIntervalMs: 20 }), deps, { run: await h.service.getDispatchRun(run.id), items: [] });
    expect(s).toMatchObject({ runId: run.id, stopReason: 'completed', status: 'succeeded', exitCode: 0 });
    expect(s.legs.map((l) => l.key)).toEqual([b]);
    expect(opens).toBe(0);
    expect(beats).toBe(0);
    expect(readRunRecord(h.stateDir, run.id)).toMatchObject({ runId: run.id, command: 'run', options: { origin: 'hosted' } });
  });

  it('a closed run is reported, not run', async () => {
    const a = h.item('task', 'A');
    const run = await openRun([{ workItemKey: a }]);
    const closed = await h.service.closeDispatchRun(run.id, { stopReason: 'halted', status: 'failed' });
    const s = await runExistingRun(h.opts(), h.deps(), { run: closed, items: [] });
    expect(s).toMatchObject({ runId: run.id, status: 'failed', exitCode: 1, legs: [] });
  });

  it('redacts a secret that appears only while the leg runs (a refreshed git token)', async () => {
    const a = h.item('task', 'A');
    const run = await openRun([{ workItemKey: a }]);
    const later = 'late-minted-token-0123456789';
    const live: string[] = [];
    const agent = `sh -c "echo token=${later}; git -c user.name=a -c user.email=a@example.invalid commit -q --allow-empty -m \\"$SVC_CARD_KEY: x\\""`;
    const deps = h.deps();
    // Minted as the agent starts: after the leg's stream redactors were built (no timer racing a sleep).
    const startAgent = deps.runAgentProcess;
    deps.runAgentProcess = (spec) => {
      live.push(later);
      return startAgent(spec);
    };
    const s = await runExistingRun(h.opts({ agent: { agentCmd: agent }, liveSecrets: () => live, sendLogs: true }), deps, { run, items: [] });
    expect(s.status).toBe('succeeded');
    const log = readFileSync(logPath(runPaths(h.stateDir, run.id), a), 'utf8');
    expect(log).toContain('token=[REDACTED]');
    expect(log).not.toContain(later);
  });
});

describe("continue RUN_ID takes the original run's options", () => {
  it('defaults agent and flags from run.json; flags still win', () => {
    const recorded = {
      agent: { agentCmd: './agent.sh {prompt_file}', model: 'm1' },
      onFailure: 'continue',
      parallel: 3,
      sendLogs: true,
      allowEmpty: true,
      maxCostUsd: 2.5,
      timeouts: { idleMs: 60_000, cardMs: 120_000, killGraceMs: 1_000, runMs: null },
    };
    expect(continueFlags({}, recorded)).toMatchObject({
      agentCmd: './agent.sh {prompt_file}',
      model: ['m1'],
      onFailure: 'continue',
      parallel: '3',
      sendLogs: true,
      allowEmpty: true,
      maxCost: '2.5',
      idleTimeout: '60000ms',
      cardTimeout: '120000ms',
      killGrace: '1000ms',
    });
    const mine = continueFlags({ agent: ['claude'], parallel: '1', sendLogs: false, idleTimeout: '5m' }, recorded);
    expect(mine).toMatchObject({ agent: ['claude'], parallel: '1', sendLogs: false, idleTimeout: '5m' });
    expect(mine.agentCmd).toBeUndefined();
    expect(continueFlags({ onFailure: 'halt' }, undefined)).toEqual({ onFailure: 'halt' });
    // The workflow's flags: the original's apply again unless given now.
    expect(continueFlags({}, { verify: false, setup: 'npm ci' })).toMatchObject({ verify: false, setup: 'npm ci' });
    expect(continueFlags({}, { verify: 'npm test' })).toMatchObject({ verify: 'npm test' });
    expect(continueFlags({ verify: 'make check' }, { verify: false })).toMatchObject({ verify: 'make check' });
    expect(continueFlags({}, { verify: 42 }).verify).toBeUndefined();
    // --agent-env: the names again, unless given now; never anything but names.
    expect(continueFlags({}, { agentEnv: ['NPM_TOKEN', 7] }).agentEnv).toEqual(['NPM_TOKEN']);
    expect(continueFlags({ agentEnv: ['OTHER'] }, { agentEnv: ['NPM_TOKEN'] }).agentEnv).toEqual(['OTHER']);
  });

  it('svc continue with no agent flag reruns the failed legs with the original agent command', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-continue-'));
    const marker = join(dir, 'ok');
    // Fails until the marker exists, then commits.
    writeFileSync(
      join(dir, 'agent.sh'),
      // The marker's path reaches the agent only by name (--agent-env), in the continued run too.
      `test -f "$CONTINUE_MARKER" || exit 3\necho x > card-$SVC_CARD_KEY.txt\ngit add -A\ngit -c user.name=a -c user.email=a@example.invalid commit -qm "$SVC_CARD_KEY: done"\n`,
    );
    const agent = `sh ${join(dir, 'agent.sh')}`;
    const a = h.item('task', 'A');
    const b = h.item('task', 'B');
    const env = {
      SVC_BASE_URL: h.svc.url,
      SVC_TOKEN: h.svc.token,
      SVC_PROJECT: h.svc.projectKey,
      SVC_STATE_DIR: h.stateDir,
      SVC_REPO: h.repo,
      PATH: process.env.PATH,
      CONTINUE_MARKER: marker,
    };
    const first = testContext({ env, globals: { json: true } });
    await runDispatchCommand(
      { command: 'run', keys: [a, b], agentCmd: agent, agentEnv: ['CONTINUE_MARKER'], onFailure: 'continue', idleTimeout: '40s', verify: 'true' },
      first,
    );
    const firstSummary = JSON.parse(first.stdout.text);
    expect(firstSummary).toMatchObject({ status: 'failed' });
    expect(firstSummary.legs.map((l: { disposition: string; exitCode: number }) => [l.disposition, l.exitCode])).toEqual([
      ['failed', 3],
      ['failed', 3],
    ]);
    const recorded = readRunRecord(h.stateDir, firstSummary.runId)!;
    expect(recorded.options).toMatchObject({
      agent: { agentCmd: agent },
      agentEnv: ['CONTINUE_MARKER'],
      onFailure: 'continue',
      timeouts: { idleMs: 40_000 },
      verify: 'true',
    });
    expect(JSON.stringify(recorded)).not.toContain(h.svc.token);

    writeFileSync(marker, '');
    const again = testContext({ env, globals: { json: true } });
    await runDispatchCommand({ command: 'continue', keys: [firstSummary.runId] }, again);
    const summary = JSON.parse(again.stdout.text);
    expect(summary, again.stderr.text).toMatchObject({ command: 'continue', status: 'succeeded' });
    expect(summary.legs.map((l: { key: string; disposition: string }) => [l.key, l.disposition])).toEqual([
      [a, 'implemented'],
      [b, 'implemented'],
    ]);
    expect(readRunRecord(h.stateDir, summary.runId)!.options).toMatchObject({
      agent: { agentCmd: agent },
      onFailure: 'continue',
      timeouts: { idleMs: 40_000 },
      verify: 'true',
      agentEnv: ['CONTINUE_MARKER'],
    });
  });
});
