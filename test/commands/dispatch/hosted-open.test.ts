// `--hosted` with nothing to open is no failure: openHosted says why no run was opened (the
// command prints it and exits 0) instead of throwing an error that carries exit 0.
import { describe, expect, test } from 'vitest';
import { openHosted } from '../../../src/commands/dispatch/hosted-open.js';
import type { DispatchRunOpen } from '../../../src/contract/types.js';
import type { DispatchService } from '../../../src/dispatch/ports.js';

const emptyPage = { items: [], nextCursor: null };
const nothingReady = {
  listReadyContainers: async () => emptyPage,
  listReadyBugs: async () => emptyPage,
  listWorkItems: async () => emptyPage,
} as unknown as DispatchService;

const opts = { command: 'next', keys: [], projectKey: 'DEMO', agent: { agent: 'claude' } } as unknown as Parameters<typeof openHosted>[0];

describe('openHosted', () => {
  test('nothing ready: no run is opened, and the note says why', async () => {
    const opened: DispatchRunOpen[] = [];
    const result = await openHosted(opts, {
      service: nothingReady,
      stateDir: '/nonexistent',
      openHostedRun: async (body) => {
        opened.push(body);
        throw new Error('must not open');
      },
    });
    expect(result.opened).toBeNull();
    expect(result.opened === null && result.note).toMatch(/ready/);
    expect(opened).toEqual([]);
  });
});
