// What a leg's uid leaves outside its leg's folder (docs/agents.md, docs/trust.md): files in the
// shared temp folders and System V IPC objects outlive its processes, and the next leg of the same
// uid would find them. So they go each time the uid is leased (./pool.ts), after its processes were
// killed (when its last leg ended, or now, when that leg's svc died), and when `runs recover` frees
// a dead owner's lease: a crashed leg's leftovers go as a finished one's do. Swept as a leg starts,
// beside git making its worktree, it costs the leg little; swept as a leg ends, it would be on
// the path of every leg's end.
//
// Removed as root, since the uid may have put a file where it cannot remove it any more (a folder
// it made read-only, another uid's folder): with no process of the uid left, and by `find`, which
// never follows a link (it walks by descriptor and checks each folder it enters) and runs `rm` in
// the folder that holds the entry (`-execdir`), never through a path another uid could change.
// Root's own folders that nobody else may write (svc's legs roots among them, whose kept leg
// folders `runs recover` removes) are passed over. A private mount namespace per leg was measured
// too (about 10 ms per process start of the uid here); it needs CAP_SYS_ADMIN, which containers
// rarely grant, and a leg's steps would each need one, so the sweep is what runs everywhere.
import { lstatSync, readFileSync } from 'node:fs';
import { run } from '../process/run.js';

/** The shared temp folders a uid may write into. */
export const SHARED_TEMP = ['/tmp', '/var/tmp', '/dev/shm'] as const;

/** ipcrm's flag for each table of /proc/sysvipc. */
const IPC_TABLES = { msg: '-q', shm: '-m', sem: '-s' } as const;

/** ipcrm's arguments for every message queue, shared memory segment and semaphore set `uid` owns or created. */
function ipcArgs(uid: number): string[] {
  const args: string[] = [];
  for (const [table, flag] of Object.entries(IPC_TABLES)) {
    let text: string;
    try {
      text = readFileSync(`/proc/sysvipc/${table}`, 'utf8');
    } catch {
      continue;
    }
    const [head = '', ...rows] = text.trim().split('\n');
    const cols = head.trim().split(/\s+/);
    const [owner, creator] = [cols.indexOf('uid'), cols.indexOf('cuid')];
    if (owner < 0 || creator < 0) continue;
    for (const row of rows) {
      const f = row.trim().split(/\s+/);
      if (f[owner] === String(uid) || f[creator] === String(uid)) args.push(flag, f[1]!);
    }
  }
  return args;
}

const runQuietly = async (file: string, args: string[]): Promise<void> => {
  await run(file, args, { cwd: '/', env: { PATH: '/usr/bin:/bin:/usr/sbin:/sbin' }, timeoutMs: 0, maxBuffer: 1 << 20 });
};

/**
 * Removes the files `uid` left in the shared temp folders (each entry of the uid, at any depth on
 * the folder's own file system, with all it holds) and its System V IPC objects. Call it only once
 * no process of the uid is left (they are killed first), so nothing of it can race the sweep.
 */
export async function sweepUid(uid: number, folders: readonly string[] = SHARED_TEMP): Promise<void> {
  // svc's own files are never a leg's leftovers (and root's are everyone's).
  if (uid === 0 || uid === process.getuid?.()) return;
  const roots = folders.filter((d) => lstatSync(d, { throwIfNoEntry: false })?.isDirectory());
  const u = String(uid);
  if (roots.length) {
    await runQuietly('find', [
      ...roots,
      '-xdev',
      '-mindepth',
      '1',
      '(',
      '-type',
      'd',
      '-uid',
      '0',
      '!',
      '-perm',
      '-0002',
      '-prune',
      ')',
      '-o',
      '-uid',
      u,
      '-execdir',
      'rm',
      '-rf',
      '--one-file-system',
      '--',
      '{}',
      '+',
      '-prune',
    ]);
  }
  const ipc = ipcArgs(uid);
  if (ipc.length) await runQuietly('ipcrm', ipc);
}
