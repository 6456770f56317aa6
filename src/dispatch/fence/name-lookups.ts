// Whether a fenced leg's programs may look a listed name up themselves and connect to it directly
// (docs/trust.md, "The network of a leg"). The kernel opens only what the leg's resolver answered
// (direct.ts), and the resolver hears only DNS over UDP: a program whose lookups go another way
// (nscd, systemd-resolved's socket through nss-resolve, DNS over TCP) would find a listed name
// refused where the proxy reaches it. So NO_PROXY names the listed names only where this machine
// looks names up in /etc/hosts and over UDP DNS alone; anywhere else they go through the proxy.
// What /etc/hosts itself says of a listed name is opened for the leg's life, as an answer of the
// resolver would be: a program reads that file before it asks DNS.
import { existsSync, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { type Allowlist, canonicalHost } from './allowlist.js';
import { answerEntries, type DirectEntry, entryKey } from './direct.js';

/** What decides how names are looked up here: the files' text (null: absent) and nscd's socket. */
export interface LookupFiles {
  nsswitch: string | null;
  resolvConf: string | null;
  hosts: string | null;
  nscd: boolean;
}

const text = (path: string) => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
};

/** This machine's files, read as the leg's programs will read them (a few small files, per leg). */
export function readLookupFiles(): LookupFiles {
  return {
    nsswitch: text('/etc/nsswitch.conf'),
    resolvConf: text('/etc/resolv.conf'),
    hosts: text('/etc/hosts'),
    nscd: ['/run/nscd/socket', '/var/run/nscd/socket'].some((p) => existsSync(p)),
  };
}

// The sources of nsswitch's `hosts:` line that ask only /etc/hosts, UDP DNS or the machine's own name.
const THROUGH_RESOLVER = new Set(['files', 'dns', 'myhostname']);

/** Whether every lookup of a name here is /etc/hosts or DNS over UDP (which the fence sends to the leg's resolver). */
export function lookupsReachResolver(files: LookupFiles): boolean {
  if (files.nscd) return false;
  const line = lines(files.nsswitch).find((l) => /^hosts\s*:/.test(l));
  // glibc's default without the file (or the line): dns, then files.
  const sources = line
    ? line
        .replace(/^hosts\s*:/, '')
        .replace(/\[[^\]]*\]/g, ' ')
        .split(/\s+/)
        .filter(Boolean)
    : ['dns', 'files'];
  if (!sources.every((s) => THROUGH_RESOLVER.has(s))) return false;
  const options = lines(files.resolvConf)
    .filter((l) => /^options\s/.test(l))
    .flatMap((l) => l.split(/\s+/).slice(1));
  return !options.some((o) => o === 'use-vc' || o === 'tcp');
}

/** The IPv4 addresses /etc/hosts gives each of the canonical `names` it mentions. */
export function hostsFileAnswers(hosts: string | null, names: readonly string[]): Map<string, string[]> {
  const wanted = new Set(names);
  const out = new Map<string, string[]>();
  for (const l of lines(hosts)) {
    const [address, ...aliases] = l.split(/\s+/);
    if (!address || isIP(address) !== 4) continue;
    for (const alias of aliases) {
      const name = canonicalHost(alias);
      if (!name || !wanted.has(name)) continue;
      const known = out.get(name) ?? [];
      if (!known.includes(address)) out.set(name, [...known, address]);
    }
  }
  return out;
}

/**
 * The listed names a leg's programs look up themselves and reach directly (`noProxy`, NO_PROXY's
 * spelling: `.suffix` for `*.suffix`), where every lookup here reaches the leg's resolver;
 * and what /etc/hosts says of them, opened for the leg's life as the resolver's
 * answers would be (public addresses only, as for those).
 */
export function directNames(list: Allowlist, listed: readonly DirectEntry[], files: LookupFiles): { noProxy: string[]; opened: DirectEntry[] } {
  if (!lookupsReachResolver(files)) return { noProxy: [], opened: [] };
  const named = list.entries.filter((e) => e.kind !== 'address');
  const fromFile = hostsFileAnswers(
    files.hosts,
    named.filter((e) => e.kind === 'name').map((e) => e.host),
  );
  // Two names the file points at one address (an alias) open it once.
  const opened = new Map<string, DirectEntry>();
  for (const [name, addresses] of fromFile) for (const e of answerEntries(list, name, addresses, listed)) opened.set(entryKey(e), e);
  return {
    noProxy: [...new Set(named.map((e) => (e.kind === 'suffix' ? `.${e.host}` : e.host)))],
    opened: [...opened.values()],
  };
}

const lines = (t: string | null) =>
  (t ?? '')
    .split('\n')
    .map((l) => l.replace(/#.*/, '').trim())
    .filter(Boolean);
