// What a leg's uid leaves for its next leg (item 5), as root: files in the shared temp
// folders and System V IPC objects are removed when the uid is emptied (src/dispatch/agent/
// uid-leftovers.ts), without following a link the uid planted; two legs of one `--agent-user`
// share a uid, and the second finds nothing of the first.
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { acquireAgentUser, leaseDir } from '../../../src/dispatch/boundary/pool.js';
import { sweepUid } from '../../../src/dispatch/boundary/uid-leftovers.js';
import type { AgentPoolSpec } from '../../../src/dispatch/boundary/user.js';
import { runDispatch } from '../../../src/dispatch/lifecycle/dispatch.js';
import { startHarness, type Harness } from '../../support/engine.js';

const isRoot = process.getuid?.() === 0;
/** uids of no user and no pool, of this test file alone. */
const U = 47_500 + (process.pid % 400);
const V = U + 400;
const COMMIT = 'git -c user.name=agent -c user.email=agent@example.invalid commit -q';

/** Runs `script` in sh as `uid`; its stdout. */
const as = (uid: number, script: string, ...args: string[]) =>
  execFileSync('/bin/sh', ['-c', script, 'sh', ...args], { uid, gid: uid, cwd: '/', encoding: 'utf8', env: { PATH: '/usr/bin:/bin' } });

/** The ids of the System V IPC objects `uid` owns or created, by kind. */
function ipcOf(uid: number): Record<'msg' | 'shm' | 'sem', string[]> {
  const of = (kind: 'msg' | 'shm' | 'sem') => {
    const [head, ...rows] = readFileSync(`/proc/sysvipc/${kind}`, 'utf8').trim().split('\n');
    const cols = head!.trim().split(/\s+/);
    const [u, c] = [cols.indexOf('uid'), cols.indexOf('cuid')];
    return rows
      .map((r) => r.trim().split(/\s+/))
      .filter((f) => f[u] === String(uid) || f[c] === String(uid))
      .map((f) => f[1]!);
  };
  return { msg: of('msg'), shm: of('shm'), sem: of('sem') };
}

/** A message queue, a shared memory segment and a semaphore set, mode 644, made as the current uid. */
const MAKE_IPC = 'ipcmk -Q -p 0644 >/dev/null && ipcmk -M 4096 -p 0644 >/dev/null && ipcmk -S 1 -p 0644 >/dev/null';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

describe.skipIf(!isRoot || process.platform !== 'linux')("a uid's leftovers", () => {
  it('are removed from a shared temp folder and the IPC tables, wherever the uid put them, through no link it planted', async () => {
    const shared = mkdtempSync(join(tmpdir(), 'svc-shared-tmp-'));
    const elsewhere = mkdtempSync(join(tmpdir(), 'svc-link-target-'));
    cleanups.push(
      () => rmSync(shared, { recursive: true, force: true }),
      () => rmSync(elsewhere, { recursive: true, force: true }),
    );
    chmodSync(shared, 0o1777);
    chmodSync(elsewhere, 0o777);
    // A file of the uid beyond a link it planted: following the link would remove it.
    writeFileSync(join(elsewhere, 'kept'), 'beyond the link\n');
    chownSync(join(elsewhere, 'kept'), U, U);
    // Another uid's open folder, which the uid wrote into.
    mkdirSync(join(shared, 'other'), { mode: 0o777 });
    chownSync(join(shared, 'other'), V, V);
    chmodSync(join(shared, 'other'), 0o777);
    as(V, 'echo theirs > "$1/other/theirs"', shared);
    // Root's own closed folder, as svc's legs root holding a leg folder kept for `runs recover`.
    mkdirSync(join(shared, 'roots', 'kept-leg'), { recursive: true, mode: 0o755 });
    chownSync(join(shared, 'roots', 'kept-leg'), U, U);
    as(
      U,
      'cd "$1" && echo x > file && mkfifo fifo && mkdir locked && echo y > locked/inner && chmod 500 locked && ln -s "$2" link && echo z > other/mine',
      shared,
      elsewhere,
    );
    as(U, MAKE_IPC);
    expect(Object.values(ipcOf(U)).map((ids) => ids.length)).toEqual([1, 1, 1]);

    await sweepUid(U, [shared]);

    expect(readFileSync(join(elsewhere, 'kept'), 'utf8')).toBe('beyond the link\n');
    for (const name of ['file', 'fifo', 'locked', 'link', 'other/mine']) expect(lstatSync(join(shared, name), { throwIfNoEntry: false }), name).toBeUndefined();
    expect(readFileSync(join(shared, 'other', 'theirs'), 'utf8')).toBe('theirs\n');
    expect(existsSync(join(shared, 'roots', 'kept-leg'))).toBe(true);
    expect(ipcOf(U)).toEqual({ msg: [], shm: [], sem: [] });
  });

  it('of a leg whose svc died (a stale lease) go when the uid is next leased, before it is handed out', async () => {
    const left = `/tmp/svc-left-crashed-${process.pid}`;
    cleanups.push(() => rmSync(left, { force: true }));
    as(U, `echo secret > "$1"; ${MAKE_IPC}`, left);
    writeFileSync(join(leaseDir(), String(U)), JSON.stringify({ pid: 4_194_303, start: '1' }), { mode: 0o600 });
    const lease = await acquireAgentUser({ kind: 'user', user: { name: String(U), uid: U, gid: U } });
    try {
      expect(lstatSync(left, { throwIfNoEntry: false })).toBeUndefined();
      expect(ipcOf(U)).toEqual({ msg: [], shm: [], sem: [] });
    } finally {
      await lease.release();
    }
  });

  describe('two legs of one --agent-user', () => {
    let h: Harness;
    afterEach(async () => {
      await h?.close();
      for (const kind of ['msg', 'shm', 'sem'] as const) {
        for (const id of ipcOf(U)[kind]) execFileSync('ipcrm', [{ msg: '-q', shm: '-m', sem: '-s' }[kind], id]);
      }
    });

    it('the second finds none of the files, FIFO and IPC objects the first left', async () => {
      h = await startHarness();
      const pool: AgentPoolSpec = { kind: 'user', user: { name: String(U), uid: U, gid: U } };
      const gate = mkdtempSync(join(tmpdir(), 'svc-left-gate-'));
      cleanups.push(() => rmSync(gate, { recursive: true, force: true }));
      chmodSync(gate, 0o777);
      const tag = `svc-left-${process.pid}`;
      const paths = [`/tmp/${tag}`, `/var/tmp/${tag}`, `/dev/shm/${tag}`, `/tmp/${tag}.fifo`];
      const leave = join(gate, 'leave.sh');
      writeFileSync(
        leave,
        `umask 022\nfor p in ${paths.slice(0, 3).join(' ')}; do echo secret > "$p"; done\nmkfifo ${paths[3]}\n${MAKE_IPC}\n` +
          `ipcs -q -m -s > ${gate}/made.txt\n${COMMIT} --allow-empty -m "$SVC_CARD_KEY: left things"\n`,
        { mode: 0o755 },
      );
      const look = join(gate, 'look.sh');
      writeFileSync(
        look,
        `for p in ${paths.join(' ')}; do if [ -e "$p" ]; then echo "seen $p"; fi; done > ${gate}/seen.txt\n` +
          `ipcs -q -m -s | awk -v me="$(id -un 2>/dev/null || id -u)" '$3 == me || $3 == "${U}" { print "seen ipc", $0 }' >> ${gate}/seen.txt\n` +
          `${COMMIT} --allow-empty -m "$SVC_CARD_KEY: looked"\n`,
        { mode: 0o755 },
      );
      const first = await runDispatch(h.opts({ keys: [h.item('task', 'Leaves things')], agentUser: pool, agent: { agentCmd: `sh ${leave}` } }), h.deps());
      expect(first.legs[0]).toMatchObject({ disposition: 'implemented' });
      // The first leg did make them, as its uid.
      expect(readFileSync(join(gate, 'made.txt'), 'utf8')).toMatch(new RegExp(`\\s${U}\\s+644\\s`));
      const second = await runDispatch(h.opts({ keys: [h.item('task', 'Looks for them')], agentUser: pool, agent: { agentCmd: `sh ${look}` } }), h.deps());
      expect(second.legs[0]).toMatchObject({ disposition: 'implemented' });
      expect(readFileSync(join(gate, 'seen.txt'), 'utf8')).toBe('');
      for (const p of paths) expect(lstatSync(p, { throwIfNoEntry: false })).toBeUndefined();
      expect(ipcOf(U)).toEqual({ msg: [], shm: [], sem: [] });
    });
  });
});
