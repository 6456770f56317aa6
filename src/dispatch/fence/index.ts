// The egress fence of a leg (docs/trust.md, "The network of a leg"): what the leg code asks of it. `up`
// starts the leg's proxy and resolver and puts its uid's nftables rules up; the leg's processes get
// the proxy variables. `down` reads what the kernel rejected, removes the rules and stops both.
import { Allowlist } from './allowlist.js';
import { NAMESPACE_PROXY_PORT, inNamespace } from './bwrap.js';
import { answerEntries, DirectAnswers, listedAddresses } from './direct.js';
import { type LookupName, startDnsStub, TTL_S } from './dns-stub.js';
import { legRulesUp } from './leg-rules.js';
import { directNames, readLookupFiles } from './name-lookups.js';
import type { WrappedArgv } from '../process/run-in-group.js';
import { startLegProxy } from './proxy.js';
import { RefusalBook, type Refusal } from './refusal.js';

import type { NetworkMode } from './modes.js';

export type { NetworkMode } from './modes.js';

/** The network of a run's legs, decided once when it opens (run-options.ts). */
export interface NetworkPolicy {
  mode: NetworkMode;
  /** Allowlist entries (preset hosts, the git host, the workflow's, --allow-host), as written. */
  allow: string[];
}

/** What a leg's result says of its network: the mode, and what was refused (each once, counted). */
export interface LegNetwork {
  mode: NetworkMode;
  refused: Refusal[];
}

/** A leg's fence while it is up. */
export interface LegFence {
  /** `env` with the proxy variables (and git's http.proxy added to its GIT_CONFIG_* entries). */
  env(env: Record<string, string>): Record<string, string>;
  /** A normal user's fence: a program's argv, in a network namespace of its own (bwrap.ts). */
  wrap?(argv: readonly string[]): WrappedArgv;
  /** Reads the kernel's refusals, removes the rules, stops the proxy and resolver: every refusal of the leg. */
  down(): Promise<Refusal[]>;
}

export interface FenceRequest {
  /** The leg's uid (root: nft rules per uid); null: svc's own user, fenced by a namespace per program. */
  uid: number | null;
  mode: 'fenced' | 'none';
  allow: readonly string[];
  ownPorts?: { first: number; count: number } | null;
  /** Hears each refusal the first time it happens (the leg's log line, its event). */
  onRefused(r: Refusal): void;
  /** Where the leg's resolver asks for a listed name's addresses (default: the system's resolver; the bench's stands in for the internet's DNS). */
  lookup?: LookupName;
}

/** Puts a leg's fence up (as root: per uid). Throws FenceError when the kernel will not take the rules. */
export async function fenceUp(req: FenceRequest): Promise<LegFence> {
  const book = new RefusalBook(req.onRefused);
  const add = (r: Omit<Refusal, 'count'>) => book.add(r);
  if (req.uid === null) return namespaceFence(req, add, () => book.list());
  // The leg's own servers are reached through the proxy like any allowed host (and directly: leg-rules.ts).
  const own = req.ownPorts ? Array.from({ length: req.ownPorts.count }, (_, i) => req.ownPorts!.first + i) : [];
  const allow = Allowlist.parse([...req.allow, ...own.flatMap((p) => [`127.0.0.1:${p}`, `localhost:${p}`, `[::1]:${p}`])]);
  // The allowlist's own addresses, and what the resolver answers for its names, the kernel carries
  // without the proxy (direct.ts); proxy-aware programs are told so by NO_PROXY.
  const asListed = Allowlist.parse(req.allow);
  const listed = listedAddresses(asListed);
  const names = req.mode === 'fenced' ? directNames(asListed, listed, readLookupFiles()) : { noProxy: [], opened: [] };
  let answers: DirectAnswers | null = null;
  const onAnswer = (name: string, addresses: string[]) => answers?.admit(answerEntries(allow, name, addresses, listed)) ?? Promise.resolve();
  // The proxy and the resolver start side by side: a leg waits for the slower, not for both in turn.
  const [proxy, dns] = req.mode === 'fenced' ? await startBoth(allow, add, onAnswer, req.lookup) : [null, null];
  let rules: Awaited<ReturnType<typeof legRulesUp>>;
  try {
    rules = await legRulesUp(req.uid, {
      mode: req.mode,
      ...(proxy ? { proxyPort: proxy.port } : {}),
      ...(dns ? { dnsPort: dns.port } : {}),
      ownPorts: req.ownPorts ?? null,
      direct: [...listed, ...names.opened],
    });
    answers = new DirectAnswers((entries, seconds) => rules.open(entries, seconds), TTL_S);
  } catch (error) {
    await proxy?.close();
    await dns?.close();
    throw error;
  }
  const url = proxy ? `http://127.0.0.1:${proxy.port}` : null;
  let down: Promise<Refusal[]> | null = null;
  return {
    env: (env) => (url ? proxyEnv(env, url, [...new Set(listed.map((e) => e.address)), ...names.noProxy]) : env),
    down: () =>
      (down ??= (async () => {
        // The uid has no process left: its rules, proxy and resolver go side by side.
        const [kernel] = await Promise.allSettled([rules.down(), proxy?.close(), dns?.close()]);
        if (kernel.status === 'rejected') throw kernel.reason;
        for (const r of kernel.value) add(r);
        return book.list();
      })()),
  };
}

/** The leg's proxy and resolver; when one cannot start, the other is closed and the error thrown. */
async function startBoth(
  allow: Allowlist,
  add: (r: Omit<Refusal, 'count'>) => void,
  onAnswer: (name: string, addresses: string[]) => Promise<void>,
  lookup: LookupName | undefined,
) {
  const [proxy, dns] = await Promise.allSettled([startLegProxy(allow, add), startDnsStub(allow, add, onAnswer, lookup)]);
  if (proxy.status === 'fulfilled' && dns.status === 'fulfilled') return [proxy.value, dns.value] as const;
  if (proxy.status === 'fulfilled') await proxy.value.close();
  if (dns.status === 'fulfilled') await dns.value.close();
  throw proxy.status === 'rejected' ? proxy.reason : (dns as PromiseRejectedResult).reason;
}

/** A normal user's fence: each program in a namespace of its own, whose proxy socket svc's proxy serves. */
async function namespaceFence(req: FenceRequest, add: (r: Omit<Refusal, 'count'>) => void, list: () => Refusal[]): Promise<LegFence> {
  if (req.mode === 'none') return { env: (env) => env, wrap: (argv) => inNamespace(argv, null), down: async () => list() };
  const own = req.ownPorts ? Array.from({ length: req.ownPorts.count }, (_, i) => req.ownPorts!.first + i) : [];
  const allow = Allowlist.parse([...req.allow, ...own.flatMap((p) => [`127.0.0.1:${p}`, `localhost:${p}`])]);
  const proxy = await startLegProxy(allow, add);
  const url = `http://127.0.0.1:${NAMESPACE_PROXY_PORT}`;
  let down: Promise<Refusal[]> | null = null;
  return {
    env: (env) => proxyEnv(env, url),
    wrap: (argv) => inNamespace(argv, (handle) => proxy.accept(handle)),
    down: () =>
      (down ??= (async () => {
        await proxy.close();
        return list();
      })()),
  };
}

/**
 * The proxy variables, both spellings, and git's `http.proxy` appended to what GIT_CONFIG_* holds;
 * NO_PROXY holds only `direct`: the listed addresses, and the listed names where the leg's lookups
 * reach its resolver, what the kernel lets the leg reach without the proxy.
 */
export function proxyEnv(env: Record<string, string>, url: string, direct: readonly string[] = []): Record<string, string> {
  const n = Number(env.GIT_CONFIG_COUNT ?? 0) || 0;
  const out: Record<string, string> = { ...env };
  for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY']) {
    out[name] = url;
    out[name.toLowerCase()] = url;
  }
  // No other exceptions: whatever else the leg asks for goes to the proxy, which refuses it.
  out.NO_PROXY = out.no_proxy = direct.join(',');
  out.GIT_CONFIG_COUNT = String(n + 1);
  out[`GIT_CONFIG_KEY_${n}`] = 'http.proxy';
  out[`GIT_CONFIG_VALUE_${n}`] = url;
  return out;
}

export type { Refusal } from './refusal.js';
export { refusalLine } from './refusal.js';

/** What a fenced leg's programs run with. */
export interface FenceHooks {
  env(env: Record<string, string>): Record<string, string>;
  wrap?(argv: readonly string[]): WrappedArgv;
}
