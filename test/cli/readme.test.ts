// The README's getting-started block, run as written by bash on a fresh home in a fresh git
// repository, against the built bin/svc.js. Two things differ from a user's machine, both said
// here: the server gets a free port (8787 may be taken by another test or user; SVC_BASE_URL
// follows it), and `claude` is a stand-in that commits and speaks Claude Code's stream-json.
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expect, it } from 'vitest';
import { BIN, isolatedEnv, makeRepo, run } from '../support/cli.js';

const README = readFileSync(resolve(import.meta.dirname, '../../README.md'), 'utf8');
const STREAM = resolve(import.meta.dirname, '../fixtures/agents/streams/claude-success.jsonl');

function gettingStarted(): string {
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

it("the README's getting-started runs as written: a project of one's own, a token, an item, a run that lands", async () => {
  const block = gettingStarted();
  const serve = 'svc server --db ~/svc.db &';
  expect(block).toContain(serve);
  // The promise the issue broke: $TOKEN is set before it is piped.
  expect(block.indexOf('TOKEN=')).toBeLessThan(block.indexOf('"$TOKEN"'));
  const port = await freePort();
  const bin = mkdtempSync(join(tmpdir(), 'svc-readme-bin-'));
  writeFileSync(join(bin, 'svc'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
  writeFileSync(
    join(bin, 'claude'),
    `#!/bin/sh\ncat > /dev/null\necho "done by claude" > "$SVC_CARD_KEY.txt"\ngit add "$SVC_CARD_KEY.txt"\n` +
      `git -c user.name=Claude -c user.email=claude@agent.test commit -q -m "$SVC_CARD_KEY: add a health check"\ncat "${STREAM}"\n`,
  );
  chmodSync(join(bin, 'svc'), 0o755);
  chmodSync(join(bin, 'claude'), 0o755);
  const repo = await makeRepo();
  const env = isolatedEnv({ SVC_BASE_URL: `http://127.0.0.1:${port}`, PATH: `${bin}:${process.env.PATH}` });
  const script = `set -eu\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n${block.replace(serve, `svc server --db ~/svc.db --port ${port} &`)}`;
  const result = await new Promise<{ code: number | null; out: string; err: string }>((done) => {
    const child = spawn('bash', ['-c', script], { cwd: repo, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.on('close', (code) => done({ code, out, err }));
  });
  expect(result.err).toContain('Logged in to');
  expect(result.err).toMatch(/PROJ-1 implemented/);
  expect(result.code, result.err).toBe(0);
  expect(result.out + result.err).not.toMatch(/svc_pat_/);
  expect(await run('git', ['log', '--format=%s', '-1', 'svc/PROJ-1'], repo)).toBe('PROJ-1: add a health check\n');
}, 60_000);

it('the README is a user’s guide a newcomer reads in one sitting: at most 250 lines', () => {
  expect(README.split('\n').length).toBeLessThanOrEqual(250);
});
