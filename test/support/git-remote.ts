// A bare repository as `origin` of a test repository: the remote pushes and fetches go to.
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeRepo, run } from './cli.js';

export async function addBareOrigin(repo: string): Promise<string> {
  const bare = mkdtempSync(join(tmpdir(), 'svc-origin-'));
  await run('git', ['init', '-q', '--bare', bare]);
  await run('git', ['remote', 'add', 'origin', bare], repo);
  await run('git', ['push', '-q', 'origin', 'main'], repo);
  return bare;
}

let template: Promise<{ repo: string; origin: string }> | undefined;

/**
 * A test repository with a bare `origin` that holds its main, as `makeRepo()` plus
 * `addBareOrigin()` make them, copied from a pair built once per test file (a push alone is
 * several git processes): the copy's remote URL is rewritten to point at the copied origin.
 */
export async function copyRepoWithOrigin(): Promise<{ repo: string; origin: string }> {
  template ??= makeRepo().then(async (repo) => ({ repo, origin: await addBareOrigin(repo) }));
  const t = await template;
  const repo = mkdtempSync(join(tmpdir(), 'svc-repo-'));
  const origin = mkdtempSync(join(tmpdir(), 'svc-origin-'));
  cpSync(t.repo, repo, { recursive: true });
  cpSync(t.origin, origin, { recursive: true });
  const config = join(repo, '.git', 'config');
  writeFileSync(config, readFileSync(config, 'utf8').replace(`url = ${t.origin}\n`, `url = ${origin}\n`));
  return { repo, origin };
}

/** The commit `ref` names in `dir`, or null. */
export async function refOf(dir: string, ref: string): Promise<string | null> {
  return run('git', ['rev-parse', '--verify', '-q', ref], dir).then(
    (s) => s.trim(),
    () => null,
  );
}

/**
 * Puts a commit on `branch` of the bare remote only (the pull request's head as another machine
 * pushed it), on top of the remote's main, adding `file` (content "remote"): written straight
 * into the bare repository by one `git fast-import`, so the test repository never sees it until
 * it fetches.
 */
export async function commitOnRemoteOnly(bare: string, branch: string, file: string): Promise<string> {
  const marks = join(mkdtempSync(join(tmpdir(), 'svc-marks-')), 'marks');
  const message = `remote ${file}\n`;
  const content = 'remote\n';
  const stream = [
    `commit refs/heads/${branch}`,
    'mark :1',
    `committer t <t@example.invalid> ${Math.floor(Date.now() / 1000)} +0000`,
    `data ${Buffer.byteLength(message)}`,
    message,
    'from refs/heads/main^0',
    `M 100644 inline ${file}`,
    `data ${Buffer.byteLength(content)}`,
    content,
  ].join('\n');
  await new Promise<void>((ok, fail) => {
    const child = execFile('git', ['fast-import', '--quiet', `--export-marks=${marks}`], { cwd: bare }, (error, _out, stderr) =>
      error ? fail(new Error(`git fast-import: ${stderr || error.message}`)) : ok(),
    );
    child.stdin!.end(stream);
  });
  return readFileSync(marks, 'utf8').trim().split(' ')[1]!;
}

/** An open pull request of `svc/<KEY>` on acme/shop, as the service records a delivery. */
export const openDelivery = (over: Record<string, unknown> = {}) => ({
  repo: 'acme/shop',
  number: 7,
  title: 'PR',
  url: 'https://git.example.test/acme/shop/pull/7',
  state: 'open',
  ci: 'failing',
  baseRef: 'main',
  defaultBranch: 'main',
  ...over,
});
