// What a leg's uid may reach as root (docs/trust.md, "The network of a leg"), in svc's table (nft.ts).
// Each uid gets, the first time one of its legs is fenced, three chains and the sets they look in,
// kept for the process's life: `leg_<uid>` (fenced) accepts replies, the leg's proxy and resolver,
// its own ports and the addresses it may reach directly (direct.ts), records what it rejects in two
// sets (IPv4, IPv6) and rejects everything else (other loopback ports, other addresses, UDP, ICMP,
// IPv6); `none_<uid>` records and rejects every packet; `dns_<uid>` redirects its DNS. A leg empties what the last one left,
// fills the sets and points the uid's verdict at its chain; at its end the verdict goes and what
// was rejected is read: a few elements in one transaction each way, where making and removing the
// chains and sets cost the kernel more.
import { FenceError, nftSession, ourTable, processFence } from './nft.js';
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
  /** Points the uid's verdict nowhere; what was rejected. */
  down(): Promise<Omit<Refusal, 'count'>[]>;
}

/**
 * The uids whose chains and sets are in this process's table, each with what of them may hold
 * something of its last leg (`set NAME` or `chain NAME`): all the next leg empties. An object is
 * counted as holding something before nft is asked to fill it, so a failed call leaves it counted.
 */
const made = processFence.made;

/** The sets of a uid: what svc serves it (proxy, resolver), its own ports, what it reaches directly (one port, any port), what was rejected. */
const setsOf = (uid: number) => ({ svc: `svc_${uid}`, own: `own_${uid}`, okp: `okp_${uid}`, oka: `oka_${uid}`, r4: `r4_${uid}`, r6: `r6_${uid}` });

/**
 * The chains and sets of `uid`, made once. Each is emptied as it is made: should the table already
 * hold them (a module loaded again in the same process, as a test runner does), nothing of what
 * they held stays, and their rules are not there twice.
 */
function uidObjects(t: string, uid: number): string[] {
  const s = setsOf(uid);
  const fenced = (text: string) => `add rule inet ${t} leg_${uid} ${text}`;
  const none = (text: string) => `add rule inet ${t} none_${uid} ${text}`;
  const record = [
    `meta nfproto ipv4 meta l4proto { tcp, udp } update @${s.r4} { ip daddr . meta l4proto . th dport }`,
    `meta nfproto ipv6 meta l4proto { tcp, udp } update @${s.r6} { ip6 daddr . meta l4proto . th dport }`,
    'meta l4proto tcp reject with tcp reset',
    'reject',
  ];
  return [
    `add chain inet ${t} leg_${uid}`,
    `add chain inet ${t} none_${uid}`,
    `add chain inet ${t} dns_${uid}`,
    `add set inet ${t} ${s.svc} { type ipv4_addr . inet_proto . inet_service; }`,
    `add set inet ${t} ${s.own} { type inet_service; flags interval; }`,
    `add set inet ${t} ${s.okp} { type ipv4_addr . inet_service; flags timeout; }`,
    `add set inet ${t} ${s.oka} { type ipv4_addr; flags timeout; }`,
    `add set inet ${t} ${s.r4} { type ipv4_addr . inet_proto . inet_service; flags dynamic; size 4096; }`,
    `add set inet ${t} ${s.r6} { type ipv6_addr . inet_proto . inet_service; flags dynamic; size 4096; }`,
    ...['leg', 'none', 'dns'].map((c) => `flush chain inet ${t} ${c}_${uid}`),
    ...Object.values(s).map((set) => `flush set inet ${t} ${set}`),
    // Replies of connections it was allowed to open, and of its own servers to others.
    fenced('ct state established,related accept'),
    fenced(`ip daddr . meta l4proto . th dport @${s.svc} accept`),
    fenced(`ip daddr 127.0.0.0/8 tcp dport @${s.own} accept`),
    fenced(`ip6 daddr ::1 tcp dport @${s.own} accept`),
    fenced(`ip daddr . tcp dport @${s.okp} accept`),
    fenced(`meta l4proto tcp ip daddr @${s.oka} accept`),
    ...record.map(fenced),
    ...record.map(none),
  ];
}

/** Elements for `entries` in the one-port set (okp) or the any-port one (oka). */
const elements = (entries: readonly DirectEntry[], anyPort: boolean, timeout: string) =>
  entries
    .filter((e) => (e.port === null) === anyPort)
    .map((e) => `${e.address}${e.port === null ? '' : ` . ${e.port}`}${timeout}`)
    .join(', ');

/** The rules of one leg's uid, up in one transaction; `down` takes them away and says what they rejected. */
export async function legRulesUp(uid: number, rules: LegRules): Promise<LegRulesHandle> {
  if (!Number.isInteger(uid) || uid <= 0) throw new FenceError(`cannot fence uid ${uid}`);
  const t = await ourTable();
  const s = setsOf(uid);
  const fenced = rules.mode === 'fenced';
  // What the last leg left is emptied first, in the same transaction.
  const held = made.get(uid);
  const lines = held ? [...held].map((o) => `flush ${o.replace(' ', ` inet ${t} `)}`) : uidObjects(t, uid);
  const filled = new Set([`set ${s.r4}`, `set ${s.r6}`]);
  const add = (set: string, items: string) => items && (lines.push(`add element inet ${t} ${set} { ${items} }`), filled.add(`set ${set}`));
  if (fenced) {
    add(s.svc, [rules.proxyPort && `127.0.0.1 . tcp . ${rules.proxyPort}`, rules.dnsPort && `127.0.0.1 . udp . ${rules.dnsPort}`].filter(Boolean).join(', '));
    const own = rules.ownPorts;
    if (own?.count) add(s.own, own.count > 1 ? `${own.first}-${own.first + own.count - 1}` : String(own.first));
    add(s.okp, elements(rules.direct ?? [], false, ''));
    add(s.oka, elements(rules.direct ?? [], true, ''));
    if (rules.dnsPort) {
      filled.add(`chain dns_${uid}`);
      lines.push(`add rule inet ${t} dns_${uid} meta nfproto ipv4 udp dport 53 redirect to :${rules.dnsPort}`);
      lines.push(`add element inet ${t} dns { ${uid} : jump dns_${uid} }`);
    }
  }
  // One transaction; the verdict comes last in it.
  lines.push(`add element inet ${t} legs { ${uid} : jump ${fenced ? 'leg' : 'none'}_${uid} }`);
  await nftSession().run([lines.join('; ')]);
  made.set(uid, filled);
  return {
    open: async (entries, seconds) => {
      filled.add(`set ${s.okp}`).add(`set ${s.oka}`);
      // Added, removed and added again in one transaction: an element there already gets the new timeout.
      const ops = [s.okp, s.oka].flatMap((set, i) => {
        const timed = elements(entries, i === 1, ` timeout ${seconds}s`);
        if (!timed) return [];
        const again = `add element inet ${t} ${set} { ${timed} }`;
        return [again, `delete element inet ${t} ${set} { ${elements(entries, i === 1, '')} }`, again];
      });
      if (ops.length) await nftSession().run([ops.join('; ')]);
    },
    // The uid's verdict goes (its chains are reached no more) and what the kernel refused is read,
    // in one exchange with nft; the sets are emptied by the uid's next leg (`made`), off this one's time.
    down: async () => {
      const listed = await nftSession().run([
        [`delete element inet ${t} legs { ${uid} }`, ...(fenced && rules.dnsPort ? [`delete element inet ${t} dns { ${uid} }`] : [])].join('; '),
        `list set inet ${t} ${s.r4}`,
        `list set inet ${t} ${s.r6}`,
      ]);
      // The verdict went first, so nothing is added to them now: one that listed empty needs no emptying.
      for (const set of [s.r4, s.r6]) if (!new RegExp(`set ${set} \\{[^}]*elements =`).test(listed)) filled.delete(`set ${set}`);
      return parseRefused(listed);
    },
  };
}

/**
 * Protocols by number: nft names them from /etc/protocols, which a minimal image (the runner's)
 * does not have, and then lists the number.
 */
const PROTOCOLS: Readonly<Record<string, string>> = { '6': 'tcp', '17': 'udp' };

/** What the kernel rejected, from the listing of a leg's two sets (each address, protocol and port once). */
export function parseRefused(text: string): Omit<Refusal, 'count'>[] {
  const out: Omit<Refusal, 'count'>[] = [];
  // `set r4_UID { ... elements = { 127.0.0.3 . tcp . 80, ... } }`: addresses, protocols, ports.
  for (const m of text.matchAll(/set r([46])_\d+ \{[^]*?(?:elements = \{([^}]*)\}|\n\t\})/g)) {
    for (const e of (m[2] ?? '').split(',')) {
      const [host, listed, port] = e.trim().split(' . ');
      if (!host || !listed || !port) continue;
      const proto = PROTOCOLS[listed] ?? listed;
      out.push({ host, port: Number(port), how: `kernel: ${proto}${m[1] === '6' ? ' over IPv6' : ''}, not through the proxy` });
    }
  }
  return out;
}
