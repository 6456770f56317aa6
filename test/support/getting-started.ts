// The README's getting-started block, run as written by bash on a fresh home in a fresh git
// repository, with whatever `svc` the caller puts first on PATH (the built tree on Node 22 in
// test/cli/readme.test.ts, the installed tarball on the machine's Node 20 in
// test/package/pack.test.ts). Two things differ from a user's machine, both said here: the server
// gets a free port (8787 may be taken by another test or user; SVC_BASE_URL follows it), and
// `claude` is a stand-in that commits and speaks Claude Code's stream-json.
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expect } from 'vitest';
import { isolatedEnv, makeRepo, run } from './cli.js';

export const README = readFileSync(resolve(import.meta.dirname, '../../README.md'), 'utf8');
const STREAM = resolve(import.meta.dirname, '../fixtures/agents/streams/claude-success.jsonl');
const SERVE = 'svc server --db ~/svc.db &';

export function gettingStarted(): string {
  const section = README.slice(README.indexOf('## Getting started\n'));
  const block = /```sh\n([\s\S]*?)```/.exec(section);
  if (!block) throw new Error('README: no sh block under "Getting started"');
  return block[1]!;
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((done) => s.listen(0, '127.0.0.1', done));
  const { port } = s.address() as AddressInfo;
  await new Promise((done) => s.close(done));
  return port;
}

/** The block's outcome: bash's exit code and output, and the repository it ran in. */
export interface GettingStartedRun {
  code: number | null;
  out: string;
  err: string;
  repo: string;
}

/** Runs the block with `path` as PATH (where `svc` must resolve) and the stand-in `claude` first. */
export async function runGettingStarted(path: string): Promise<GettingStartedRun> {
  const block = gettingStarted();
  expect(block).toContain(SERVE);
  // The promise an earlier README broke: $TOKEN is set before it is piped.
  expect(block.indexOf('TOKEN=')).toBeLessThan(block.indexOf('"$TOKEN"'));
  const port = await freePort();
  const bin = mkdtempSync(join(tmpdir(), 'svc-readme-agent-'));
  writeFileSync(
    join(bin, 'claude'),
    `#!/bin/sh\ncat > /dev/null\necho "done by claude" > "$SVC_CARD_KEY.txt"\ngit add "$SVC_CARD_KEY.txt"\n` +
      `git -c user.name=Claude -c user.email=claude@agent.test commit -q -m "$SVC_CARD_KEY: add a health check"\ncat "${STREAM}"\n`,
  );
  chmodSync(join(bin, 'claude'), 0o755);
  const repo = await makeRepo();
  const env = isolatedEnv({ SVC_BASE_URL: `http://127.0.0.1:${port}`, PATH: `${bin}:${path}` });
  const script = `set -eu\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n${block.replace(SERVE, `svc server --db ~/svc.db --port ${port} &`)}`;
  return new Promise((done) => {
    const child = spawn('bash', ['-c', script], { cwd: repo, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.on('close', (code) => done({ code, out, err, repo }));
  });
}

/** What the block promises: logged in, PROJ-1 implemented on svc/PROJ-1, exit 0, no token shown. */
export async function expectItLanded(r: GettingStartedRun): Promise<void> {
  expect(r.err).toContain('Logged in to');
  expect(r.err).toMatch(/PROJ-1 implemented/);
  expect(r.code, r.err).toBe(0);
  expect(r.out + r.err).not.toMatch(/svc_pat_/);
  expect(await run('git', ['log', '--format=%s', '-1', 'svc/PROJ-1'], r.repo)).toBe('PROJ-1: add a health check\n');
}
