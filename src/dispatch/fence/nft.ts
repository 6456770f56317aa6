// The kernel's half of the fence as root (docs/trust.md, "The network of a leg"): nftables rules matching
// the socket owner (`meta skuid`) of a leg's uid. One table per svc process, `inet svc_<pid>`,
// its comment holding the process's start time, so a crashed svc's table is known by anyone (the
// next svc, `svc runs recover`) and removed; one `nft -i` session that talks to it. What a leg's
// uid may reach is leg-rules.ts.
import { firstLine, run, runSync } from '../process/run.js';
import { startSession } from '../process/session.js';
import { isAlive, processStart, selfMark } from '../state/run-lock.js';

export class FenceError extends Error {}

async function nft(args: string[], input?: string): Promise<string> {
  const r = await run('nft', args, { maxBuffer: 16 << 20, ...(input !== undefined ? { input } : {}) });
  if (r.code === 0) return r.stdout;
  throw new FenceError(`nft ${args.join(' ')}: ${firstLine(r)}`);
}

/**
 * One `nft -i` for the life of the process: a leg's rules go up and down in a millisecond or two,
 * where a new nft costs several (docs/trust.md's per-leg budget). Each call is some lines (a
 * line is one transaction) and a sentinel nft answers with an error on stderr (a word that is no
 * command: its syntax error costs nft no look at the kernel, as a list would): once it is in,
 * every error of those lines is too (one pipe, in order), and what `list` lines print is awaited
 * on stdout until each of their blocks is complete.
 */
const NFT_TIMEOUT_MS = 10_000;

class NftSession {
  readonly #child: ReturnType<typeof startSession>;
  #out = '';
  #err = '';
  #seq = 0;
  #pending = 0;
  #queue: Promise<unknown> = Promise.resolve();
  #waiting: (() => void) | null = null;
  #dead: Error | null = null;

  constructor() {
    this.#child = startSession('nft', ['-i']);
    this.#child.stdout!.setEncoding('utf8').on('data', (d: string) => ((this.#out += d), this.#waiting?.()));
    this.#child.stderr!.setEncoding('utf8').on('data', (d: string) => ((this.#err += d), this.#waiting?.()));
    const die = (why: string) => {
      this.#dead ??= new FenceError(why);
      this.#waiting?.();
    };
    this.#child.on('error', (e) => die(`nft -i: ${e.message}`));
    this.#child.on('exit', () => die('nft -i ended'));
    this.#child.stdin!.on('error', () => undefined);
    this.#hold(false);
  }

  /** Whether it can answer no more (nft ended or hung): the next leg starts another. */
  get dead(): boolean {
    return this.#dead !== null;
  }

  /** Keeps the process alive while a command is out, and never for an idle nft. */
  #hold(on: boolean): void {
    for (const h of [this.#child, this.#child.stdin, this.#child.stdout, this.#child.stderr] as unknown as { ref?(): void; unref?(): void }[])
      on ? h?.ref?.() : h?.unref?.();
  }

  /** Runs `lines` in order; what their lists printed, or a FenceError with nft's first line. */
  run(lines: string[]): Promise<string> {
    this.#pending++;
    this.#hold(true);
    const next = this.#queue
      .then(() => this.#one(lines))
      .finally(() => {
        if (--this.#pending === 0) this.#hold(false);
      });
    this.#queue = next.catch(() => undefined);
    return next;
  }

  #one(lines: string[]): Promise<string> {
    if (this.#dead) return Promise.reject(this.#dead);
    const mark = `svc_sync_${++this.#seq}_end`;
    const lists = lines.filter((l) => l.startsWith('list ')).length;
    this.#out = '';
    this.#err = '';
    this.#child.stdin!.write(`${lines.join('\n')}\n${mark}\n`);
    return new Promise((done, fail) => {
      // An nft that stops answering fails the leg rather than hanging it (and ends the session).
      const timer = setTimeout(() => {
        this.#dead ??= new FenceError(`nft -i did not answer in ${NFT_TIMEOUT_MS / 1000} s`);
        this.#child.kill();
        this.#waiting?.();
      }, NFT_TIMEOUT_MS);
      timer.unref();
      const settle = (f: () => void) => {
        clearTimeout(timer);
        f();
      };
      this.#waiting = () => {
        if (this.#dead) return settle(() => fail(this.#dead));
        const at = this.#err.indexOf(mark);
        if (at < 0) return;
        const errors = this.#err.slice(0, this.#err.lastIndexOf('Error:', at));
        if (/Error:/.test(errors)) {
          this.#waiting = null;
          return settle(() => fail(new FenceError(`nft: ${errors.trim().split('\n')[0]} (${lines[0]?.slice(0, 80)})`)));
        }
        // Each list prints one table block, ending in a line "}" of its own.
        if ((this.#out.match(/^\}$/gm)?.length ?? 0) < lists) return;
        this.#waiting = null;
        settle(() => done(this.#out));
      };
      this.#waiting();
    });
  }
}

/**
 * What this process holds of the kernel's fence: its table, its nft session, and what of each
 * uid's chains and sets is in the table (leg-rules.ts). One per process, as the table is, not one
 * per copy of this module: a module loaded again in the same process (a test runner's shared
 * workers) finds them as they are, and sweeps nobody's tables a second time.
 */
interface ProcessFence {
  table: Promise<string> | null;
  session: NftSession | null;
  made: Map<number, Set<string>>;
}
const here = globalThis as { [key: symbol]: ProcessFence | undefined };
export const processFence: ProcessFence = (here[Symbol.for('svc.fence')] ??= { table: null, session: null, made: new Map() });

/** The process's nft session, started again if the last one ended. */
export function nftSession(): NftSession {
  if (!processFence.session || processFence.session.dead) processFence.session = new NftSession();
  return processFence.session;
}

const TABLE_PREFIX = 'svc_';

/** This process's table, made once (stale tables of dead svc processes are removed first). */
export function ourTable(): Promise<string> {
  const table = (processFence.table ??= (async () => {
    await removeStaleTables();
    const me = selfMark();
    const name = `${TABLE_PREFIX}${me.pid}`;
    // The DNS redirect comes before every other NAT of the output hook (-100): a container's own
    // DNAT of its embedded resolver (Docker's 127.0.0.11) would otherwise send the leg's DNS past it.
    await nft(
      ['-f', '-'],
      [
        `table inet ${name} {`,
        `  comment "svc pid ${me.pid} start ${me.start ?? '-'}"`,
        '  map legs { type uid : verdict; }',
        '  map dns { type uid : verdict; }',
        '  chain out { type filter hook output priority 0; policy accept; meta skuid vmap @legs; }',
        '  chain nat_out { type nat hook output priority -110; policy accept; meta skuid vmap @dns; }',
        '}',
        '',
      ].join('\n'),
    );
    // Gone with the process, however it ends short of a kill -9 (then the next svc removes it).
    process.once('exit', () => {
      // Its answer does not matter: a table already gone is what was wanted.
      runSync('nft', ['delete', 'table', 'inet', name]);
    });
    return name;
  })());
  table.catch(() => {
    if (processFence.table === table) processFence.table = null;
  });
  return table;
}

/** Removes every `inet svc_<pid>` table whose svc is gone; the names removed. */
export async function removeStaleTables(): Promise<string[]> {
  const listed = JSON.parse(await nft(['-j', 'list', 'tables'])) as { nftables: { table?: { family: string; name: string } }[] };
  const removed: string[] = [];
  for (const { table: t } of listed.nftables) {
    const pid = t && t.family === 'inet' ? /^svc_(\d+)$/.exec(t.name)?.[1] : undefined;
    if (!pid || Number(pid) === process.pid) continue;
    // Another svc may end (and remove its table) between the two listings: gone is not an error.
    const text = await nft(['list', 'table', 'inet', t!.name]).catch(() => null);
    if (text === null) continue;
    const comment = /comment "svc pid \d+ start (\S+)"/.exec(text)?.[1] ?? null;
    const start = comment && comment !== '-' ? comment : null;
    if (isAlive({ pid: Number(pid), start }) && (start === null || processStart(Number(pid)) === start)) continue;
    await nft(['delete', 'table', 'inet', t!.name]).catch(() => undefined);
    removed.push(t!.name);
  }
  return removed;
}

/** Whether nft can be had here (root, the binary, a kernel that takes an inet table). */
export async function nftWorks(): Promise<string | null> {
  if (process.getuid?.() !== 0) return 'svc is not root';
  try {
    await ourTable();
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}
