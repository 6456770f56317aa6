// The kernel's half of the fence as root (DISPATCH.md §9, docs/trust.md): nftables rules matching
// the socket owner (`meta skuid`) of a leg's uid. One table per svc process, `inet svc_<pid>`,
// its comment holding the process's start time, so a crashed svc's table is known by anyone (the
// next svc, `svc runs recover`) and removed. Per leg, in one transaction: a chain that accepts
// only the leg's proxy port, its resolver (UDP 53 to any server is redirected there) and its own
// ports, records what it rejects in two sets (IPv4, IPv6), and rejects everything else: other
// loopback ports, other addresses, UDP, ICMP, IPv6. `none`: the chain rejects every packet.
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { isAlive, processStart, selfMark } from '../state/run-lock.js';
import type { DirectEntry } from './direct.js';
import type { Refusal } from './refusal.js';

/** What one leg's uid may reach. */
export interface LegRules {
  mode: 'fenced' | 'none';
  proxyPort?: number;
  dnsPort?: number;
  /** The leg's own ports (the workflow's `ports`): its servers, which it may reach on loopback. */
  ownPorts?: { first: number; count: number } | null;
  /** Addresses it may reach without the proxy for its life (direct.ts: its allowlist's own). */
  direct?: readonly DirectEntry[];
}

/** A leg's rules while they are up. */
export interface LegRulesHandle {
  /** Lets the uid reach `entries` without the proxy for `seconds` more (an entry open already: from now). */
  open(entries: readonly DirectEntry[], seconds: number): Promise<void>;
  /** Removes the rules; what they rejected. */
  down(): Promise<Omit<Refusal, 'count'>[]>;
}

export class FenceError extends Error {}

function nft(args: string[], input?: string): Promise<string> {
  return new Promise((done, fail) => {
    const child = execFile('nft', args, { encoding: 'utf8', maxBuffer: 16 << 20 }, (error, out, err) =>
      error
        ? fail(
            new FenceError(
              `nft ${args.join(' ')}: ${
                String(err || error.message)
                  .trim()
                  .split('\n')[0]
              }`,
            ),
          )
        : done(out),
    );
    if (input !== undefined) child.stdin?.end(input);
  });
}

/**
 * One `nft -i` for the life of the process: a leg's rules go up and down in a millisecond or two,
 * where a new nft costs several (DISPATCH.md §9's per-leg budget). Each call is some lines (a
 * line is one transaction) and a sentinel nft answers with an error on stderr: once it is in,
 * every error of those lines is too (one pipe, in order), and what `list` lines print is awaited
 * on stdout until each of their blocks is complete.
 */
const NFT_TIMEOUT_MS = 10_000;

class NftSession {
  readonly #child: ChildProcess;
  #out = '';
  #err = '';
  #seq = 0;
  #pending = 0;
  #queue: Promise<unknown> = Promise.resolve();
  #waiting: (() => void) | null = null;
  #dead: Error | null = null;

  constructor() {
    this.#child = spawn('nft', ['-i'], { stdio: ['pipe', 'pipe', 'pipe'] });
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
    const mark = `list table inet svc_sync_${++this.#seq}`;
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

let session: NftSession | null = null;

/** The process's nft session, started again if the last one ended. */
function nftSession(): NftSession {
  if (!session || session.dead) session = new NftSession();
  return session;
}

const TABLE_PREFIX = 'svc_';

/** This process's table, made once (stale tables of dead svc processes are removed first). */
let table: Promise<string> | null = null;

export function ourTable(): Promise<string> {
  table ??= (async () => {
    await removeStaleTables();
    const me = selfMark();
    const name = `${TABLE_PREFIX}${me.pid}`;
    await nft(
      ['-f', '-'],
      [
        `table inet ${name} {`,
        `  comment "svc pid ${me.pid} start ${me.start ?? '-'}"`,
        '  map legs { type uid : verdict; }',
        '  map dns { type uid : verdict; }',
        '  chain out { type filter hook output priority 0; policy accept; meta skuid vmap @legs; }',
        '  chain nat_out { type nat hook output priority -100; policy accept; meta skuid vmap @dns; }',
        '}',
        '',
      ].join('\n'),
    );
    // Gone with the process, however it ends short of a kill -9 (then the next svc removes it).
    process.once('exit', () => {
      try {
        execFileSync('nft', ['delete', 'table', 'inet', name], { stdio: 'ignore' });
      } catch {
        // already gone
      }
    });
    return name;
  })();
  table.catch(() => {
    table = null;
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

/** A set's elements for `entries` (`.` port: the set of one port; none: the set of any port). */
const elements = (entries: readonly DirectEntry[], anyPort: boolean, timeout: string) =>
  entries
    .filter((e) => (e.port === null) === anyPort)
    .map((e) => `${e.address}${e.port === null ? '' : ` . ${e.port}`}${timeout}`)
    .join(', ');

/** The rules of one leg's uid, up in one transaction; `down` removes them and says what they rejected. */
export async function legRulesUp(uid: number, rules: LegRules): Promise<LegRulesHandle> {
  if (!Number.isInteger(uid) || uid <= 0) throw new FenceError(`cannot fence uid ${uid}`);
  const t = await ourTable();
  const leg = `leg_${uid}`;
  const fenced = rules.mode === 'fenced';
  const lines = [
    `add chain inet ${t} ${leg}`,
    `add chain inet ${t} dns_${uid}`,
    `add set inet ${t} r4_${uid} { type ipv4_addr . inet_proto . inet_service; flags dynamic; size 4096; }`,
    `add set inet ${t} r6_${uid} { type ipv6_addr . inet_proto . inet_service; flags dynamic; size 4096; }`,
  ];
  // What it reaches without the proxy: an address on one port (okp), on any port (oka).
  const direct = [`okp_${uid}`, `oka_${uid}`];
  if (fenced) {
    lines.push(
      `add set inet ${t} ${direct[0]} { type ipv4_addr . inet_service; flags timeout; }`,
      `add set inet ${t} ${direct[1]} { type ipv4_addr; flags timeout; }`,
    );
    for (const [i, set] of direct.entries()) {
      const listed = elements(rules.direct ?? [], i === 1, '');
      if (listed) lines.push(`add element inet ${t} ${set} { ${listed} }`);
    }
  }
  const rule = (text: string) => lines.push(`add rule inet ${t} ${leg} ${text}`);
  if (fenced) {
    // Replies of connections it was allowed to open, and of its own servers to others.
    rule('ct state established,related accept');
    rule(`ip daddr . tcp dport @${direct[0]} accept`);
    rule(`meta l4proto tcp ip daddr @${direct[1]} accept`);
    if (rules.proxyPort) rule(`ip daddr 127.0.0.1 tcp dport ${rules.proxyPort} accept`);
    if (rules.dnsPort) {
      rule(`ip daddr 127.0.0.1 udp dport ${rules.dnsPort} accept`);
      lines.push(`add rule inet ${t} dns_${uid} meta nfproto ipv4 udp dport 53 redirect to :${rules.dnsPort}`);
    }
    const own = rules.ownPorts;
    if (own?.count) {
      const range = own.count > 1 ? `${own.first}-${own.first + own.count - 1}` : String(own.first);
      rule(`ip daddr 127.0.0.0/8 tcp dport ${range} accept`);
      rule(`ip6 daddr ::1 tcp dport ${range} accept`);
    }
  }
  rule(`meta nfproto ipv4 meta l4proto { tcp, udp } update @r4_${uid} { ip daddr . meta l4proto . th dport }`);
  rule(`meta nfproto ipv6 meta l4proto { tcp, udp } update @r6_${uid} { ip6 daddr . meta l4proto . th dport }`);
  rule('meta l4proto tcp reject with tcp reset');
  rule('reject');
  lines.push(`add element inet ${t} legs { ${uid} : jump ${leg} }`, `add element inet ${t} dns { ${uid} : jump dns_${uid} }`);
  // One transaction; the verdict map's elements come last in it.
  await nftSession().run([lines.join('; ')]);
  return {
    open: async (entries, seconds) => {
      // Added, removed and added again in one transaction: an element there already gets the new timeout.
      const ops = direct.flatMap((set, i) => {
        const timed = elements(entries, i === 1, ` timeout ${seconds}s`);
        if (!timed) return [];
        const add = `add element inet ${t} ${set} { ${timed} }`;
        return [add, `delete element inet ${t} ${set} { ${elements(entries, i === 1, '')} }`, add];
      });
      if (ops.length) await nftSession().run([ops.join('; ')]);
    },
    // Read what the kernel refused and take the rules down in one exchange with nft.
    down: () =>
      nftSession()
        .run([
          `list set inet ${t} r4_${uid}`,
          `list set inet ${t} r6_${uid}`,
          [
            `delete element inet ${t} legs { ${uid} }`,
            `delete element inet ${t} dns { ${uid} }`,
            `delete chain inet ${t} ${leg}`,
            `delete chain inet ${t} dns_${uid}`,
            `delete set inet ${t} r4_${uid}`,
            `delete set inet ${t} r6_${uid}`,
            ...(fenced ? direct.map((set) => `delete set inet ${t} ${set}`) : []),
          ].join('; '),
        ])
        .then(parseRefused),
  };
}

/** What the kernel rejected, from the listing of a leg's two sets (each address, protocol and port once). */
function parseRefused(text: string): Omit<Refusal, 'count'>[] {
  const out: Omit<Refusal, 'count'>[] = [];
  // `set r4_UID { ... elements = { 127.0.0.3 . tcp . 80, ... } }`: addresses, protocols, ports.
  for (const m of text.matchAll(/set r([46])_\d+ \{[^]*?(?:elements = \{([^}]*)\}|\n\t\})/g)) {
    for (const e of (m[2] ?? '').split(',')) {
      const [host, proto, port] = e.trim().split(' . ');
      if (!host || !proto || !port) continue;
      out.push({ host, port: Number(port), how: `kernel: ${proto}${m[1] === '6' ? ' over IPv6' : ''}, not through the proxy` });
    }
  }
  return out;
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
