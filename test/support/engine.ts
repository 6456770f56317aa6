// The engine against the real local service: the real API client behind the engine's port, the
// real agent runner and worktrees in a temp git repository, fake agents as small shell programs.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApiClient } from '../../src/api/client.js';
import type { AdminWorkItem } from '../../src/server/admin.js';
import { dispatchServiceOf } from '../../src/dispatch/wire/service.js';
import { dispatchDeps } from '../../src/dispatch/lifecycle/deps.js';
import type { DispatchDeps, DispatchOptions } from '../../src/dispatch/lifecycle/types.js';
import type { DispatchService, LegSummary } from '../../src/dispatch/ports.js';
import { makeRepo } from './cli.js';
import { startTestService, type TestService } from './service.js';
import { afterEach, beforeEach } from 'vitest';

/** A fake agent that commits to a file named after its card (so "no changes" does not apply). */
/**
 * The default agent: one git process leaving one (empty) commit whose message starts with the
 * card's key; the shell, the file and `git add` of COMMITTING_AGENT cost two more processes a leg.
 */
export const EMPTY_COMMIT_AGENT = 'git -c user.name=agent -c user.email=agent@example.invalid commit -q --allow-empty -m "{key}: done"';

export const COMMITTING_AGENT =
  'sh -c "echo $SVC_RUN_ID >> card-$SVC_CARD_KEY.txt && git add -A && git -c user.name=agent -c user.email=agent@example.invalid commit -qm \\"$SVC_CARD_KEY: done\\""';

export interface Harness {
  svc: TestService;
  service: DispatchService;
  repo: string;
  stateDir: string;
  /** What the progress sink saw, one line per call. */
  seen: string[];
  legs: LegSummary[];
  item(kind: AdminWorkItem['kind'], title: string, extra?: Partial<AdminWorkItem>): string;
  opts(over?: Partial<DispatchOptions>): DispatchOptions;
  deps(over?: Partial<DispatchDeps>): DispatchDeps;
  close(): Promise<void>;
}

/** `repo`: the test's repository (default: a copy of `makeRepo()`'s, see support/repo-template.ts). */
export async function startHarness(over: { repo?: string } = {}): Promise<Harness> {
  const svc = await startTestService();
  const client = createApiClient({ baseUrl: svc.url, token: svc.token, maxWaitMs: 2_000, retry: { baseDelayMs: 5, maxDelayMs: 50 } });
  const service = dispatchServiceOf(client);
  const repo = over.repo ?? (await makeRepo());
  const stateDir = mkdtempSync(join(tmpdir(), 'svc-state-'));
  const seen: string[] = [];
  const legs: LegSummary[] = [];
  return {
    svc,
    service,
    repo,
    stateDir,
    seen,
    legs,
    item: (kind, title, extra = {}) => svc.admin.createWorkItem({ projectKey: svc.projectKey, kind, title, type: 'code', ...extra }).key,
    opts: (over = {}) => ({
      command: 'run',
      keys: [],
      projectKey: svc.projectKey,
      baseUrl: svc.url,
      repo,
      agent: { agentCmd: EMPTY_COMMIT_AGENT },
      onFailure: 'halt',
      parallel: 1,
      sendLogs: false,
      allowEmpty: false,
      timeouts: { idleMs: 30_000, cardMs: 60_000, killGraceMs: 500, runMs: null, flushMs: 5_000 },
      heartbeatIntervalMs: 60_000,
      worktree: true,
      dryRun: false,
      secrets: [svc.token],
      env: { PATH: process.env.PATH },
      flushIntervalMs: 30,
      ...over,
    }),
    deps: (over = {}) =>
      dispatchDeps({
        service,
        stateDir,
        output: {
          legStarted: (l) => seen.push(`start ${l.key}`),
          legFinished: (l) => {
            legs.push(l);
            seen.push(`end ${l.key} ${l.disposition}`);
          },
          info: (m) => seen.push(`info ${m}`),
          warn: (m) => seen.push(`warn ${m}`),
        },
        signal: new AbortController().signal,
        ...over,
      }),
    async close() {
      await client.close();
      await svc.close();
    },
  };
}

/**
 * A fresh harness for every test of the calling file (beforeEach), closed after it (afterEach): the
 * set-up most engine tests share. Its fields are the current test's, so read them inside a test.
 */
export function engineEachTest(): Harness {
  const h = {} as Harness;
  beforeEach(async () => {
    Object.assign(h, await startHarness());
  });
  afterEach(async () => {
    const { close } = h;
    for (const key of Object.keys(h)) delete (h as unknown as Record<string, unknown>)[key];
    await close?.();
  });
  return h;
}
