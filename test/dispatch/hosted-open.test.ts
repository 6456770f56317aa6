// `--hosted` with nothing to open is no failure: openHostedRun says why no run was opened (the
// command prints it and exits 0) instead of throwing an error that carries exit 0.
import { describe, expect, test } from 'vitest';
import type { ApiClient } from '../../src/api/client.js';
import type { DispatchRunOpen } from '../../src/contract/types.js';
import { openHostedRun } from '../../src/dispatch/start.js';

const emptyPage = { items: [], nextCursor: null };
const opened: DispatchRunOpen[] = [];
const nothingReady = {
  listReadyContainers: async () => emptyPage,
  listReadyBugs: async () => emptyPage,
  listWorkItems: async () => emptyPage,
  openDispatchRun: async (body: DispatchRunOpen) => {
    opened.push(body);
    throw new Error('must not open');
  },
} as unknown as ApiClient;

const opts = { command: 'next', keys: [], projectKey: 'DEMO', agent: { agent: 'claude' } } as unknown as Parameters<typeof openHostedRun>[0];

describe('openHostedRun', () => {
  test('nothing ready: no run is opened, and the note says why', async () => {
    const result = await openHostedRun(opts, { client: nothingReady, stateDir: '/nonexistent' });
    expect(result.opened).toBeNull();
    expect(result.opened === null && result.note).toMatch(/ready/);
    expect(opened).toEqual([]);
  });
});
