// What a leg through the agent boundary leaves behind, as root with the default pool:
// a failed leg's uncommitted files never block the next run of its card (they go on the stash),
// and the leg folders of an svc killed with -9 are removed by `svc runs recover`, its agent's
// processes with them.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LEGS_OWNER_FILE, LEGS_ROOT_PREFIX } from '../../../src/dispatch/boundary/leg-folder.js';
import { leaseDir } from '../../../src/dispatch/boundary/pool.js';
import { DEFAULT_POOL } from '../../../src/dispatch/boundary/user.js';
import { runDispatch } from '../../../src/dispatch/lifecycle/dispatch.js';
import { BIN, isolatedEnv, run } from '../../support/cli.js';
import { svcInProcess } from '../../support/svc-in-process.js';
import { engineEachTest } from '../../support/engine.js';

const isRoot = process.getuid?.() === 0;
const h = engineEachTest();

/** The legs roots of the svc process `pid` (other svc processes of the machine have their own). */
const legsRootsOf = (pid: number) =>
  readdirSync(tmpdir())
    // Another svc of the machine may remove its root between the listing and the stat.
    .filter((d) => d.startsWith(LEGS_ROOT_PREFIX) && statSync(join(tmpdir(), d), { throwIfNoEntry: false })?.uid === 0)
    .map((d) => join(tmpdir(), d))
    .filter((root) => {
      try {
        return (JSON.parse(readFileSync(join(root, LEGS_OWNER_FILE), 'utf8')) as { pid: number }).pid === pid;
      } catch {
        return false;
      }
    });

/** Whether `pid` is still the detached sleep of an agent user (not gone, not a zombie, not a reused pid). */
function agentSleepRuns(pid: number): boolean {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return /^Name:\s*sleep$/m.test(status) && !/^State:\s*Z/m.test(status) && !/^Uid:\s*0\s/m.test(status);
  } catch {
    return false;
  }
}

describe.skipIf(!isRoot)('what a leg through the boundary leaves behind', () => {
  it("a failed leg's uncommitted files do not block the next run of its card: they are stashed, with a line saying so", async () => {
    const key = h.item('task', 'leftovers');
    const first = await runDispatch(
      h.opts({ command: 'run', keys: [key], agentUser: DEFAULT_POOL, agent: { agentCmd: 'sh -c "echo draft > notes.txt; exit 1"' } }),
      h.deps(),
    );
    expect(first.legs[0]).toMatchObject({ disposition: 'failed', reason: 'exit 1' });
    const commit = 'sh -c "echo final > notes.txt && git add -A && git -c user.name=a -c user.email=a@example.invalid commit -qm \\"$SVC_CARD_KEY: done\\""';
    const second = await runDispatch(h.opts({ command: 'run', keys: [key], agentUser: DEFAULT_POOL, agent: { agentCmd: commit } }), h.deps());
    expect(second.legs[0]).toMatchObject({ disposition: 'implemented', reason: null });
    expect(await run('git', ['show', `svc/${key}:notes.txt`], h.repo)).toBe('final\n');
    // The draft is kept, not lost: on the stash, named for the run that put it there.
    expect(await run('git', ['stash', 'list'], h.repo)).toContain(`svc: left uncommitted in svc/${key} before run ${second.runId}`);
    expect(await run('git', ['show', 'stash@{0}^3:notes.txt'], h.repo)).toBe('draft\n');
    expect(h.seen.join('\n')).toMatch(new RegExp(`${key}: uncommitted files an earlier leg left in its worktree are on the stash`));
  });

  it('a leg whose worktree cannot be made gives back the uid and the folder made for its agent beside the worktree', async () => {
    const key = h.item('task', 'no base');
    const leases = () =>
      readdirSync(leaseDir()).filter((n) => {
        try {
          return (JSON.parse(readFileSync(join(leaseDir(), n), 'utf8')) as { pid: number }).pid === process.pid;
        } catch {
          return false;
        }
      });
    const summary = await runDispatch(
      h.opts({ command: 'run', keys: [key], agentUser: DEFAULT_POOL, baseRef: 'no-such-base', agent: { agentCmd: 'true' } }),
      h.deps(),
    );
    expect(summary.legs[0]).toMatchObject({ disposition: 'failed' });
    expect(summary.legs[0]?.reason).toMatch(/^worktree: .*no-such-base/);
    expect(leases()).toEqual([]);
    expect(legsRootsOf(process.pid)).toEqual([]);
  });

  it('svc killed with -9 mid-leg: runs recover removes its leg folder and kills what its agent left running', async () => {
    const key = h.item('task', 'killed mid-leg');
    const env = isolatedEnv({ SVC_BASE_URL: h.svc.url, SVC_TOKEN: h.svc.token, SVC_PROJECT: h.svc.projectKey, SVC_AGENT_USER: undefined });
    const child = spawn(process.execPath, [BIN, 'run', key, '--agent-cmd', 'sh -c "setsid sleep 300 & echo $! > started; sleep 300"', '--repo', h.repo], {
      env,
      stdio: 'ignore',
    });
    // Root may look: the agent is up when its clone holds `started`.
    let started = '';
    for (let i = 0; i < 600 && !started; i++) {
      await new Promise((r) => setTimeout(r, 50));
      for (const root of legsRootsOf(child.pid!)) {
        for (const leg of readdirSync(root).filter((n) => n.startsWith(`${key}-`))) {
          if (existsSync(join(root, leg, 'work', 'started'))) started = join(root, leg);
        }
      }
    }
    if (!started) child.kill('SIGKILL');
    expect(started, 'the agent started in a leg folder').not.toBe('');
    const detached = Number(readFileSync(join(started, 'work', 'started'), 'utf8'));
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    expect(existsSync(started)).toBe(true);

    const r = await svcInProcess(['runs', 'recover'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`removed the agent leg folder ${started} (its svc is gone)`);
    expect(existsSync(started)).toBe(false);
    expect(existsSync(join(started, '..'))).toBe(false);
    // The detached sleep of the dead leg is gone too (a zombie awaiting its reaper holds nothing):
    // SIGKILL was sent; the process ends when the kernel next runs it.
    for (let i = 0; i < 100 && agentSleepRuns(detached); i++) await new Promise((r) => setTimeout(r, 20));
    expect(agentSleepRuns(detached)).toBe(false);
    // A second recover has nothing left to remove.
    expect((await svcInProcess(['runs', 'recover'], { env })).stderr).not.toContain('removed the agent leg folder');
  }, 60_000);
});
