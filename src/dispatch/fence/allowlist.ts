// What a fenced leg may reach (docs/trust.md): entries `HOST[:PORT]`, where HOST is a name, a
// `*.suffix` (any name below the suffix, not the suffix itself) or an address, and no port means any
// port. Names are compared canonicalised (lowercase, IDNA, no trailing dot, IPv4 in dotted form);
// a name with a NUL or control character, or with anything a host name cannot hold, is refused
// before it is looked at. Private, loopback and link-local answers for an allowed name are refused
// unless the address itself is on the list (a public name cannot be pointed at the machine's inside).
import { BlockList, isIP } from 'node:net';

/** One allowed host (or suffix, or address), and its port (null: any). */
export interface AllowEntry {
  kind: 'name' | 'suffix' | 'address';
  host: string;
  port: number | null;
}

export class AllowEntryError extends Error {}

// What a host name may hold before canonicalisation: letters, digits, dot, hyphen, underscore,
// non-ASCII (IDNA), and the brackets and colons of an IPv6 address. Nothing else, NUL and controls least of all.
const HOST_CHARS = /^[A-Za-z0-9._\-:[\]\u0080-\uffff]+$/;

/**
 * The canonical form of `raw` as a host (lowercase, punycode, dotted IPv4, IPv6 without brackets),
 * or null when it is not one: empty, with a control character, a percent sign, userinfo, a path.
 */
export function canonicalHost(raw: string): string | null {
  if (!raw || raw.length > 253 + 2 || !HOST_CHARS.test(raw)) return null;
  const bracketed = raw.startsWith('[') && raw.endsWith(']');
  if (raw.includes(':') && !bracketed && isIP(raw) !== 6) return null;
  const literal = bracketed || isIP(raw) === 6 ? `[${raw.replace(/^\[|\]$/g, '')}]` : raw.replace(/\.$/, '');
  let host: string;
  try {
    host = new URL(`http://${literal}/`).hostname;
  } catch {
    return null;
  }
  host = host.replace(/^\[|\]$/g, '');
  if (isIP(host)) return host;
  if (!/^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/.test(host) || host.split('.').some((l) => l.length > 63)) return null;
  return host;
}

/** `host[:port]` or `[v6]:port`: the host as given and the port (null: none). */
export function splitHostPort(text: string): { host: string; port: number | null } | null {
  const v6 = /^\[([^\]]*)\](?::(\d+))?$/.exec(text);
  if (v6) return { host: v6[1]!, port: v6[2] ? Number(v6[2]) : null };
  if (isIP(text) === 6) return { host: text, port: null };
  const m = /^([^:]*)(?::(\d+))?$/.exec(text);
  if (!m) return null;
  return { host: m[1]!, port: m[2] ? Number(m[2]) : null };
}

/** Parses one entry (`--allow-host`, the workflow's `network: allow:`), or says in one line why not. */
export function parseAllowEntry(text: string): AllowEntry {
  const bad = (why: string) =>
    new AllowEntryError(`not a host to allow: ${JSON.stringify(text)} (${why}; a name, *.suffix or an address, with an optional :PORT)`);
  const parts = splitHostPort(text.trim());
  if (!parts) throw bad('not HOST[:PORT]');
  if (parts.port !== null && !(parts.port >= 1 && parts.port <= 65535)) throw bad('the port is 1-65535');
  const wild = parts.host.startsWith('*.');
  const host = canonicalHost(wild ? parts.host.slice(2) : parts.host);
  if (!host) throw bad('not a host name');
  if (wild && isIP(host)) throw bad('*. takes a name');
  return { kind: wild ? 'suffix' : isIP(host) ? 'address' : 'name', host, port: parts.port };
}

/** An entry as the user would write it. */
export function formatAllowEntry(e: AllowEntry): string {
  const host = e.kind === 'suffix' ? `*.${e.host}` : isIP(e.host) === 6 ? `[${e.host}]` : e.host;
  return e.port === null ? host : `${host}:${e.port}`;
}

const INSIDE = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  INSIDE.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 127],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
] as const)
  INSIDE.addSubnet(net, bits, 'ipv6');

/** A private, loopback, link-local, multicast or unspecified address (v4-mapped v6 included). */
export function isInsideAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return INSIDE.check(mapped[1]!, 'ipv4');
  const family = isIP(address);
  if (!family) return true;
  return INSIDE.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** A leg's allowlist: what it may name, and which answers it may connect to. */
export class Allowlist {
  readonly entries: readonly AllowEntry[];

  constructor(entries: readonly AllowEntry[]) {
    const seen = new Set<string>();
    this.entries = entries.filter((e) => {
      const k = formatAllowEntry(e);
      return seen.has(k) ? false : (seen.add(k), true);
    });
  }

  static parse(texts: readonly string[]): Allowlist {
    return new Allowlist(texts.map(parseAllowEntry));
  }

  /** Whether the canonical `host` may be asked for at `port` (null: any port, as DNS asks). */
  allowsName(host: string, port: number | null): boolean {
    return this.entries.some((e) => portOk(e, port) && (e.host === host ? e.kind !== 'suffix' : e.kind === 'suffix' && host.endsWith(`.${e.host}`)));
  }

  /** Whether an answer `address` of an allowed name may be connected to at `port`. */
  allowsAnswer(address: string, port: number | null): boolean {
    return !isInsideAddress(address) || this.allowsName(canonicalHost(address) ?? '', port);
  }

  /** The ports the names matching `host` are listed with: null when one of them takes any port. */
  portsOfName(host: string): number[] | null {
    const ports = new Set<number>();
    for (const e of this.entries) {
      if (e.kind === 'address' || !(e.host === host ? e.kind === 'name' : e.kind === 'suffix' && host.endsWith(`.${e.host}`))) continue;
      if (e.port === null) return null;
      ports.add(e.port);
    }
    return [...ports].sort((a, b) => a - b);
  }

  toString(): string {
    return this.entries.map(formatAllowEntry).join(', ');
  }
}

function portOk(e: AllowEntry, port: number | null): boolean {
  return e.port === null || port === null || e.port === port;
}
