// What a fenced leg's uid may connect to without the proxy (docs/trust.md, "The network of a
// leg"): the kernel carries those bytes itself, at the speed of an open leg. Two kinds: the IPv4
// addresses its allowlist names (for the leg's life), and the public IPv4 answers the leg's
// resolver gave for an allowlisted name, on that name's ports, for a while after each answer.
// Everything else still goes through the proxy or nowhere: an inside answer is never admitted
// for a name (only an address listed itself is), nor IPv6, nor UDP.
import { isIP } from 'node:net';
import { isInsideAddress, type Allowlist } from './allowlist.js';

/** An address the uid may reach on `port` (null: any port). */
export interface DirectEntry {
  address: string;
  port: number | null;
}

/** How long an answer's address stays open after the resolver gave it (its TTL, and a margin). */
export const ANSWER_OPEN_S = 60;

/** The allowlist's own IPv4 addresses, each with its port. */
export function listedAddresses(allow: Allowlist): DirectEntry[] {
  return allow.entries.filter((e) => e.kind === 'address' && isIP(e.host) === 4).map((e) => ({ address: e.host, port: e.port }));
}

/** What the resolver's answer `addresses` for the allowlisted `name` opens, beyond what `listed` already does. */
export function answerEntries(allow: Allowlist, name: string, addresses: readonly string[], listed: readonly DirectEntry[]): DirectEntry[] {
  const ports = allow.portsOfName(name);
  const out: DirectEntry[] = [];
  for (const address of addresses) {
    // An inside answer is reachable only where the address is listed itself, and then `listed` has it.
    if (isIP(address) !== 4 || isInsideAddress(address)) continue;
    const own = listed.filter((e) => e.address === address);
    if (own.some((e) => e.port === null)) continue;
    if (ports === null) out.push({ address, port: null });
    else for (const port of ports) if (!own.some((e) => e.port === port)) out.push({ address, port });
  }
  return out;
}

/**
 * The answers a leg's resolver has opened, and until when: an answer asked again while its
 * address stays open longer than the resolver's TTL needs no new nft call (`open` is only called
 * for entries that are new or would close sooner).
 */
export class DirectAnswers {
  readonly #until = new Map<string, number>();

  constructor(
    private readonly open: (entries: DirectEntry[], seconds: number) => Promise<void>,
    private readonly ttlS: number,
  ) {}

  async admit(entries: readonly DirectEntry[], now = Date.now()): Promise<void> {
    const due = entries.filter((e) => (this.#until.get(entryKey(e)) ?? 0) < now + this.ttlS * 1000);
    if (!due.length) return;
    await this.open(due, ANSWER_OPEN_S);
    for (const e of due) this.#until.set(entryKey(e), now + ANSWER_OPEN_S * 1000);
  }
}

/** One entry's identity: its address and port. */
export const entryKey = (e: DirectEntry) => `${e.address} ${e.port ?? '*'}`;
