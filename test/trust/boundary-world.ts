// The world of the agent-boundary tests (root only): a local service with a git root holding
// acme/widgets, a folder private to root (`hidden`: the git root, repositories the agent must not
// reach) and one open to the agent users (`open`, 0755: agent scripts, workspaces, rendezvous
// folders), the test's personal environment, and items made through the real API.
import { chmodSync, copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expect } from 'vitest';
import { createRepository } from '../../src/server/git/index.js';
import { isolatedEnv, type CliEnv } from '../support/cli.js';
import { startLocalServer, type LocalServer } from '../support/server-process.js';

export interface BoundaryWorld {
  server: LocalServer;
  /** Private to root (0700): the service's git root. */
  hidden: string;
  /** Open to the agent users (0755): the agent scripts (copied from fixtures/), workspaces, rendezvous folders. */
  open: string;
  /** svc with the test's own token and project DEMO. */
  personal: CliEnv;
  /** A task of DEMO made through the API; its key. */
  createItem(title: string, extra?: Record<string, unknown>): Promise<string>;
  /** Removes both folders and stops the service; the contract violations it saw. */
  stop(): Promise<string[]>;
}

/** `scripts`: fixtures/NAME → the name it gets in `open`, executable by everyone. */
export async function startBoundaryWorld(prefix: string, scripts: Record<string, string>): Promise<BoundaryWorld> {
  const hidden = mkdtempSync(join(tmpdir(), `${prefix}-`));
  const open = mkdtempSync(join(tmpdir(), `${prefix}-open-`));
  chmodSync(open, 0o755);
  const gitRoot = join(hidden, 'git-root');
  await createRepository(gitRoot, 'acme/widgets', { seedCommit: true });
  const server = await startLocalServer(['--git-root', gitRoot]);
  for (const [fixture, name] of Object.entries(scripts)) {
    copyFileSync(resolve(import.meta.dirname, '../fixtures/hosted', fixture), join(open, name));
    chmodSync(join(open, name), 0o755);
  }
  return {
    server,
    hidden,
    open,
    personal: isolatedEnv({ SVC_BASE_URL: server.url, SVC_TOKEN: server.token, SVC_PROJECT: 'DEMO' }),
    async createItem(title, extra = {}) {
      const made = await fetch(`${server.url}/api/v1/projects/DEMO/work-items`, {
        method: 'POST',
        headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ kind: 'task', type: 'code', title, ...extra }),
      });
      const body = (await made.json()) as { item?: { key: string }; key?: string };
      expect(made.status, JSON.stringify(body)).toBe(201);
      return (body.item ?? body).key as string;
    },
    async stop() {
      for (const dir of [open, hidden]) rmSync(dir, { recursive: true, force: true });
      return server.stop();
    },
  };
}
