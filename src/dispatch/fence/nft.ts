// The kernel's half of the fence as root (DISPATCH.md §9, docs/trust.md): nftables rules matching
// the socket owner (`meta skuid`) of a leg's uid. One table per svc process, `inet svc_<pid>`,
// its comment holding the process's start time, so a crashed svc's table is known by anyone (the
// next svc, `svc runs recover`) and removed. Per leg, in one transaction: a chain that accepts
// only the leg's proxy port, its resolver (UDP 53 to any server is redirected there) and its own
// ports, records what it rejects in two sets (IPv4, IPv6), and rejects everything else: other
// loopback ports, other addresses, UDP, ICMP, IPv6. `none`: the chain rejects every packet.
import { execFile, execFileSync } from 'node:child_process';
import { isAlive, processStart, selfMark } from '../state/run-lock.js';
import type { Refusal } from './refusal.js';

/** What one leg's uid may reach. */
export interface LegRules {
  mode: 'fenced' | 'none';
  proxyPort?: number;
  dnsPort?: number;
  /** The leg's own ports (the workflow's `ports`): its servers, which it may reach on loopback. */
  ownPorts?: { first: number; count: number } | null;
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
    const comment = await nft(['list', 'table', 'inet', t!.name]).then((text) => /comment "svc pid \d+ start (\S+)"/.exec(text)?.[1] ?? null);
    const start = comment && comment !== '-' ? comment : null;
    if (isAlive({ pid: Number(pid), start }) && (start === null || processStart(Number(pid)) === start)) continue;
    await nft(['delete', 'table', 'inet', t!.name]).catch(() => undefined);
    removed.push(t!.name);
  }
  return removed;
}

/** The rules of one leg's uid, up in one transaction; `down` removes them, `refused` reads what they rejected. */
export async function legRulesUp(uid: number, rules: LegRules): Promise<{ down(): Promise<void>; refused(): Promise<Omit<Refusal, 'count'>[]> }> {
  if (!Number.isInteger(uid) || uid <= 0) throw new FenceError(`cannot fence uid ${uid}`);
  const t = await ourTable();
  const leg = `leg_${uid}`;
  const lines = [
    `add chain inet ${t} ${leg}`,
    `add chain inet ${t} dns_${uid}`,
    `add set inet ${t} r4_${uid} { type ipv4_addr . inet_proto . inet_service; flags dynamic; size 4096; }`,
    `add set inet ${t} r6_${uid} { type ipv6_addr . inet_proto . inet_service; flags dynamic; size 4096; }`,
  ];
  const rule = (text: string) => lines.push(`add rule inet ${t} ${leg} ${text}`);
  if (rules.mode === 'fenced') {
    // Replies of connections it was allowed to open, and of its own servers to others.
    rule('ct state established,related accept');
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
  await nft(['-f', '-'], `${lines.join('\n')}\n`);
  return {
    refused: () => readRefused(t, uid),
    down: () =>
      nft(
        ['-f', '-'],
        [
          `delete element inet ${t} legs { ${uid} }`,
          `delete element inet ${t} dns { ${uid} }`,
          `delete chain inet ${t} ${leg}`,
          `delete chain inet ${t} dns_${uid}`,
          `delete set inet ${t} r4_${uid}`,
          `delete set inet ${t} r6_${uid}`,
          '',
        ].join('\n'),
      ).then(() => undefined),
  };
}

/** What the kernel rejected for `uid` so far (each address, protocol and port once). */
async function readRefused(t: string, uid: number): Promise<Omit<Refusal, 'count'>[]> {
  const out: Omit<Refusal, 'count'>[] = [];
  for (const set of [`r4_${uid}`, `r6_${uid}`]) {
    const listed = JSON.parse(await nft(['-j', 'list', 'set', 'inet', t, set])) as { nftables: { set?: { elem?: unknown[] } }[] };
    for (const item of listed.nftables) {
      for (const e of item.set?.elem ?? []) {
        const concat =
          (e as { concat?: unknown[]; elem?: { val?: { concat?: unknown[] } } }).concat ?? (e as { elem?: { val?: { concat?: unknown[] } } }).elem?.val?.concat;
        if (!concat) continue;
        const [host, proto, port] = concat as [string, string, number];
        out.push({ host: String(host), port: Number(port), how: `kernel: ${proto}${set.startsWith('r6') ? ' over IPv6' : ''}, not through the proxy` });
      }
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
