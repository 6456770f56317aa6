// The agent's own clone (src/dispatch/boundary/clone.ts), as root with the real `nobody`: the clone is
// the agent's, the main repository is not writable to it, its branch comes back into the worktree
// (fast-forward or rewritten) with uncommitted work as uncommitted work, and nothing the agent writes into
// its clone's .git/config runs as root when svc collects the branch.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it, vi } from 'vitest';
import { prepareAgentLeg } from '../../../src/dispatch/boundary/clone.js';
import { lookupUser, type AgentUser } from '../../../src/dispatch/boundary/user.js';
import { prepareWorktree } from '../../../src/dispatch/git/worktree.js';
import { hostileGitConfig } from '../../support/hostile-git.js';

const isRoot = process.getuid?.() === 0;

async function nobody(): Promise<AgentUser> {
  return { name: 'nobody', ...(await lookupUser('nobody'))! };
}

async function repo(open: boolean): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-agent-clone-'));
  if (open) chmodSync(dir, 0o755);
  await execa('git', ['init', '-q', '-b', 'main'], { cwd: dir });
  await execa('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', 'commit', '-q', '--allow-empty', '-m', 'init'], { cwd: dir });
  await execa('git', ['config', 'user.name', 'Svc Runner'], { cwd: dir });
  await execa('git', ['config', 'user.email', 'runner@example.invalid'], { cwd: dir });
  return dir;
}

/** A card's worktree in a fresh repository and the agent's leg prepared for it (its clone made), as `nobody`. */
async function cloneLeg(key: string, open: boolean) {
  const user = await nobody();
  const dir = await repo(open);
  const wt = await prepareWorktree({ repo: dir, key });
  const leg = await prepareAgentLeg({ user, repo: dir, key, privateDir: mkdtempSync(join(tmpdir(), 'svc-agent-clone-state-')) });
  await leg.attach(wt);
  await leg.ensureClone();
  return { user, dir, wt, leg };
}

/** What `git clone --shared --branch B` shows in `dir` (refs with their objects, B's upstream, origin), as the agent user sees its own clone. */
function cloneView(user: AgentUser, dir: string, home: string) {
  return asAgent(
    user,
    dir,
    home,
    'git for-each-ref --format="%(objectname) %(refname) %(symref)" && git rev-parse --abbrev-ref --symbolic-full-name @{u} && git config --get remote.origin.fetch && git describe --tags',
  );
}

/** A shell command as the agent user, in its clone, with its environment. */
function asAgent(user: AgentUser, cwd: string, home: string, script: string) {
  return execa('sh', ['-c', script], {
    cwd,
    uid: user.uid,
    gid: user.gid,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home },
    extendEnv: false,
    reject: false,
  });
}

describe.skipIf(!isRoot)('the agent clone, as root', () => {
  it.each([
    ['a repository the agent can read: shared objects', true, true],
    ['a private repository: the objects are copied', false, false],
  ])(
    '%s',
    async (_name, open, shared) => {
      const { user, dir, wt, leg } = await cloneLeg('CLN-1', open);
      expect(statSync(leg.workdir).uid).toBe(user.uid);
      expect(statSync(leg.home).uid).toBe(user.uid);
      expect(existsSync(join(leg.workdir, '.git', 'objects', 'info', 'alternates'))).toBe(shared);

      // The agent commits in its clone (with svc's identity) and cannot write the main repository.
      const work = await asAgent(
        user,
        leg.workdir,
        leg.home,
        'echo hi > a.txt && git add a.txt && git commit -qm "CLN-1: work" && git rev-parse --abbrev-ref HEAD && git log -1 --format=%an',
      );
      expect(work.exitCode, work.stderr).toBe(0);
      expect(work.stdout.split('\n')).toEqual(['svc/CLN-1', 'Svc Runner']);
      const intrude = await asAgent(user, leg.workdir, leg.home, `git push -q ${dir} HEAD:refs/heads/main`);
      expect(intrude.exitCode).not.toBe(0);
      expect((await execa('git', ['log', '-1', '--format=%s', 'main'], { cwd: dir })).stdout).toBe('init');

      expect(await leg.collect()).toBe(true);
      expect((await execa('git', ['log', '-1', '--format=%s'], { cwd: wt.path })).stdout).toBe('CLN-1: work');
      expect((await execa('git', ['log', '-1', '--format=%s', 'svc/CLN-1'], { cwd: dir })).stdout).toBe('CLN-1: work');
      await leg.dispose();
      expect(existsSync(leg.workdir)).toBe(false);
    },
    60_000,
  );

  it("is made under svc's hostile git config (a post-checkout hook that refuses): the agent's checkout reads none of it", async () => {
    const user = await nobody();
    const dir = await repo(true);
    const wt = await prepareWorktree({ repo: dir, key: 'CLN-3' });
    vi.stubEnv('GIT_CONFIG_GLOBAL', hostileGitConfig());
    const leg = await prepareAgentLeg({ user, repo: dir, key: 'CLN-3', privateDir: mkdtempSync(join(tmpdir(), 'svc-agent-clone-state-')) });
    await leg.attach(wt);
    await leg.ensureClone();
    // Read from the file: root's git refuses a repository owned by the agent user.
    expect(readFileSync(join(leg.workdir, '.git', 'HEAD'), 'utf8')).toBe('ref: refs/heads/svc/CLN-3\n');
    expect(statSync(leg.workdir).uid).toBe(user.uid);
    await leg.dispose();
  }, 60_000);

  it('is made when svc started in a subdirectory of the repository', async () => {
    const user = await nobody();
    const dir = await repo(true);
    const sub = join(dir, 'sub', 'deeper');
    mkdirSync(sub, { recursive: true });
    const wt = await prepareWorktree({ repo: sub, key: 'CLN-4' });
    const leg = await prepareAgentLeg({ user, repo: sub, key: 'CLN-4', privateDir: mkdtempSync(join(tmpdir(), 'svc-agent-clone-state-')) });
    await leg.attach(wt);
    await leg.ensureClone();
    expect(readFileSync(join(leg.workdir, '.git', 'HEAD'), 'utf8')).toBe('ref: refs/heads/svc/CLN-4\n');
    const work = await asAgent(user, leg.workdir, leg.home, 'git commit -q --allow-empty -m "CLN-4: work"');
    expect(work.exitCode, work.stderr).toBe(0);
    expect(await leg.collect()).toBe(true);
    expect((await execa('git', ['log', '-1', '--format=%s', 'svc/CLN-4'], { cwd: dir })).stdout).toBe('CLN-4: work');
    await leg.dispose();
  }, 60_000);

  it("brings back a rewritten branch and uncommitted work, and never runs the clone's config as root", async () => {
    const { user, dir, wt, leg } = await cloneLeg('CLN-2', true);
    // The agent plants a command in its own .git/config that any git status/diff would run.
    // Outside the leg's folder, which collect empties: a folder the agent user may write.
    const outside = mkdtempSync(join(tmpdir(), 'svc-agent-clone-marker-'));
    chmodSync(outside, 0o777);
    const marker = join(outside, 'fsmonitor-ran');
    writeFileSync(join(leg.home, 'hook.sh'), `#!/bin/sh\nid -u >> ${marker}\n`, { mode: 0o755 });
    const r = await asAgent(
      user,
      leg.workdir,
      leg.home,
      `git config core.fsmonitor ${join(leg.home, 'hook.sh')} && git commit -q --allow-empty -m one && git commit -q --amend --allow-empty -m "CLN-2: rewritten" && git reset -q --soft HEAD~0 && echo dirty > d.txt && git status --porcelain > /dev/null`,
    );
    expect(r.exitCode, r.stderr).toBe(0);
    expect(await leg.collect()).toBe(true);
    expect((await execa('git', ['log', '--format=%s', 'svc/CLN-2'], { cwd: dir })).stdout.split('\n')).toEqual(['CLN-2: rewritten', 'init']);
    // Uncommitted work comes back as uncommitted work in the worktree; the clone goes.
    expect((await execa('git', ['status', '--porcelain'], { cwd: wt.path })).stdout).toBe('?? d.txt');
    expect((await execa('git', ['log', '-1', '--format=%s'], { cwd: wt.path })).stdout).toBe('CLN-2: rewritten');
    // The hook ran for git calls as the agent (its own, and svc's snapshot of its work, made as the agent), never as root.
    const ran = existsSync(marker) ? (await execa('cat', [marker])).stdout.split('\n').filter(Boolean) : [];
    expect(ran.length, "the planted hook is live (it ran for the agent's own git calls)").toBeGreaterThan(0);
    expect(
      ran.every((uid) => Number(uid) === user.uid),
      ran.join(','),
    ).toBe(true);
    await leg.dispose();
    expect(existsSync(leg.workdir)).toBe(false);
  }, 60_000);

  it('holds what git clone --shared --branch would: origin with its branches, HEAD and tags, the upstream; a shallow source stays shallow, a sha256 one sha256', async () => {
    const user = await nobody();
    const full = await repo(true);
    const git = (cwd: string, ...args: string[]) => execa('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args], { cwd });
    await git(full, 'commit', '-q', '--allow-empty', '-m', 'second');
    await git(full, 'tag', '-a', 'v1', '-m', 'one');
    await git(full, 'tag', '-a', 'v1-of-v1', '-m', 'a tag of a tag', 'v1');
    await git(full, 'tag', 'light', 'HEAD~1');
    await git(full, 'branch', 'feature/x', 'HEAD~1');
    // A shallow source, as CI checkouts are: one commit deep.
    const shallow = mkdtempSync(join(tmpdir(), 'svc-agent-clone-'));
    chmodSync(shallow, 0o755);
    await execa('git', ['clone', '-q', '--depth', '1', '--no-single-branch', `file://${full}`, shallow]);
    await execa('git', ['-C', shallow, 'fetch', '-q', '--depth', '1', 'origin', 'refs/tags/*:refs/tags/*']);
    // A repository of sha256 objects with its HEAD detached, as CI checkouts are: git's clone takes
    // origin/HEAD from a branch at HEAD's commit.
    const sha256 = mkdtempSync(join(tmpdir(), 'svc-agent-clone-'));
    chmodSync(sha256, 0o755);
    await execa('git', ['init', '-q', '--object-format=sha256', '-b', 'main', sha256]);
    await git(sha256, 'commit', '-q', '--allow-empty', '-m', 'init');
    await git(sha256, 'commit', '-q', '--allow-empty', '-m', 'second');
    await git(sha256, 'tag', '-a', 'v1', '-m', 'one');
    await git(sha256, 'checkout', '-q', '--detach');
    for (const [dir, key] of [
      [full, 'CLN-5'],
      [shallow, 'CLN-6'],
      [sha256, 'CLN-7'],
    ] as const) {
      const wt = await prepareWorktree({ repo: dir, key });
      const leg = await prepareAgentLeg({ user, repo: dir, key, privateDir: mkdtempSync(join(tmpdir(), 'svc-agent-clone-state-')) });
      await leg.attach(wt);
      await leg.ensureClone();
      // git's own clone of the same repository, for the agent user, beside it.
      const theirs = join(leg.home, 'theirs');
      const made = await asAgent(user, leg.home, leg.home, `git clone -q --template= --shared --branch svc/${key} -- ${join(dir, '.git')} ${theirs}`);
      expect(made.exitCode, made.stderr).toBe(0);
      const ours = await cloneView(user, leg.workdir, leg.home);
      expect(ours.exitCode, ours.stderr).toBe(0);
      expect(ours.stdout).toBe((await cloneView(user, theirs, leg.home)).stdout);
      expect(ours.stdout).toContain(' refs/remotes/origin/HEAD refs/remotes/origin/main');
      expect(ours.stdout).toContain(`origin/svc/${key}`);
      // The agent works with its history as deep as the source's, fetches from origin, and its work comes back.
      const work = await asAgent(
        user,
        leg.workdir,
        leg.home,
        `git log --format=%s | wc -l && git fetch -q origin && git diff --quiet origin/main HEAD && git commit -q --allow-empty -m "${key}: work"`,
      );
      expect(work.exitCode, work.stderr).toBe(0);
      expect(work.stdout.trim()).toBe(dir === shallow ? '1' : '2');
      expect(await leg.collect()).toBe(true);
      expect((await execa('git', ['log', '-1', '--format=%s', `svc/${key}`], { cwd: dir })).stdout).toBe(`${key}: work`);
      await leg.dispose();
    }
  }, 60_000);
});
