// The user boundary (docs/trust.md "Threat model"): when svc runs as root it runs every agent as an
// unprivileged user, so the agent cannot read svc's environment (/proc/<svc>/environ), its state
// and config folders, or the credential broker's socket. Each concurrent leg gets a uid of its own
// from a pool (as Nix's build users), so legs cannot reach each other's clones, and every process
// of that uid is killed when the leg ends (./pool.ts). Which pool: `--agent-user`, else
// SVC_AGENT_USER, else the stored `agentUser`, else `svc-agent` (users svc-agent-1, -2, … created on
// first use) when svc is root. `none` keeps the agent as svc's own user.
import { run } from '../process/run.js';

/** The user an agent runs as, resolved to ids (the child's uid/gid; groups are cleared). */
export interface AgentUser {
  name: string;
  uid: number;
  gid: number;
}

/**
 * Where a leg's uid comes from:
 * - `named`: the users `<prefix>-1`, `<prefix>-2`, … made with useradd when first needed;
 * - `range`: uids FIRST..LAST used as they are, without passwd entries (gid = uid);
 * - `user`: one given user or UID[:GID], a pool of one (its legs take turns).
 */
export type AgentPoolSpec = { kind: 'named'; prefix: string; max: number } | { kind: 'range'; first: number; last: number } | { kind: 'user'; user: AgentUser };

/** The default pool when svc is root: `svc-agent-1` … `svc-agent-64`, made on first use. */
export const DEFAULT_POOL: AgentPoolSpec = { kind: 'named', prefix: 'svc-agent', max: 64 };

/**
 * The uids of runners' agents (docs/hosted.md, "The security context"): the runner image sets
 * SVC_AGENT_USER to this range, and a pool outside a runner may not use it, so no host leg ever
 * shares a uid with a runner's agent (and its `kill -9 -1` cannot reach one). 65520-65533 is a band
 * no one allocates: above useradd's UID_MAX (60000) and systemd's dynamic users (61184-65519),
 * below nobody (65534), reserved by Debian policy (65000-65533) and unused by systemd; and under
 * 65536, so a user namespace of the usual 65536 ids (Podman's, Kubernetes') maps it.
 */
export const RUNNER_AGENT_UIDS = { first: 65520, last: 65533 } as const;

/** uid 65534 is shared by system services: killing all of its processes would stop theirs. */
const SHARED_UIDS = new Set([65534]);

/** A bad `--agent-user`: unknown user, root itself, a shared user, or a switch that needs root. */
export class AgentUserError extends Error {
  override readonly name = 'AgentUserError';
}

export interface AgentUserRequest {
  /** Flag > SVC_AGENT_USER > stored value; undefined when none was given. */
  asked: string | undefined;
  /** Where the value came from, for messages (`--agent-user`, `SVC_AGENT_USER`, `agentUser`). */
  source: string;
  /** svc's own uid (process.getuid()); tests pass 0 or 1000. */
  uid: number;
  /** svc is a hosted runner's (a hosted run): only there may agents take the runners' reserved uids. */
  runner?: boolean;
  /** Looks a user up; default: `id -u NAME` / `id -g NAME`, which also sees NSS users. */
  lookup?: (name: string) => Promise<{ uid: number; gid: number } | null>;
}

export interface AgentUserChoice {
  pool: AgentPoolSpec | null;
  /** One line for the user when the agent keeps svc's rights although svc is root. */
  warning: string | null;
}

/** `id` knows every user the system knows (files, LDAP, ...); null when it knows none by that name. */
export async function lookupUser(name: string): Promise<{ uid: number; gid: number } | null> {
  // run() takes node:child_process on its first call: the config store reads AGENT_USER_SYNTAX
  // from this module on every command's start-up, and that module loads net and dgram (~1.5 ms).
  const r = await run('id', ['--', name], { env: { ...process.env, LC_ALL: 'C' }, timeoutMs: 0, maxBuffer: 1 << 20 });
  const out = r.code === 0 ? r.stdout : null;
  const m = out === null ? null : /^uid=(\d+)\S* gid=(\d+)/.exec(out.trim());
  return m ? { uid: Number(m[1]), gid: Number(m[2]) } : null;
}

/** The syntax `--agent-user` takes (also checked when the value is stored). */
export const AGENT_USER_SYNTAX = /^(none|[A-Za-z_][A-Za-z0-9_.-]*\$?|\d+(:\d+)?|\d+-\d+)$/;

/**
 * Resolves the agent pool. A numeric `UID` or `UID:GID` works without a passwd entry (containers
 * that run with an arbitrary uid), as does a range `FIRST-LAST`. Root is refused (no boundary), and
 * so is `nobody`, whose processes belong to other services too.
 */
export async function resolveAgentUser(req: AgentUserRequest): Promise<AgentUserChoice> {
  const lookup = req.lookup ?? lookupUser;
  const asked = req.asked?.trim();
  const root = req.uid === 0;
  if (asked === 'none') {
    return {
      pool: null,
      warning: root ? `${req.source} none: agents run as root, with svc's own rights (they can read its environment, state and credential socket)` : null,
    };
  }
  if (!asked) return { pool: root ? DEFAULT_POOL : null, warning: null };
  if (!AGENT_USER_SYNTAX.test(asked)) throw new AgentUserError(`${req.source}: expected a user, UID[:GID], a range FIRST-LAST or none, got '${asked}'`);
  const range = /^(\d+)-(\d+)$/.exec(asked);
  if (range) {
    const [first, last] = [Number(range[1]), Number(range[2])];
    if (first === 0 || first > last || last > 2 ** 31 - 2)
      throw new AgentUserError(`${req.source}: '${asked}' is no range of unprivileged uids (FIRST-LAST, 0 < FIRST ≤ LAST)`);
    if (SHARED_UIDS.has(first) || SHARED_UIDS.has(last) || (first < 65534 && last > 65534))
      throw new AgentUserError(`${req.source}: '${asked}' includes 65534 (nobody), which other services share`);
    if (!root) throw new AgentUserError(`${req.source} ${asked}: running agents as other users needs svc to run as root`);
    if (!req.runner) refuseRunnerUids(req.source, asked, first, last);
    return { pool: { kind: 'range', first, last }, warning: null };
  }
  const numeric = /^(\d+)(?::(\d+))?$/.exec(asked);
  const ids = numeric ? { uid: Number(numeric[1]), gid: Number(numeric[2] ?? numeric[1]) } : await lookup(asked);
  if (!ids) throw new AgentUserError(`${req.source}: no user '${asked}' on this system`);
  if (ids.uid === 0) throw new AgentUserError(`${req.source}: '${asked}' is root, which is no boundary; pass another user, or none`);
  if (ids.uid === req.uid) return { pool: null, warning: null };
  if (SHARED_UIDS.has(ids.uid)) {
    throw new AgentUserError(
      `${req.source}: '${asked}' is shared by system services, and svc kills every process of an agent's user when its leg ends; pass a user of svc's own, or leave it out (svc-agent-N)`,
    );
  }
  if (!root) throw new AgentUserError(`${req.source} ${asked}: running agents as another user needs svc to run as root`);
  if (!req.runner) refuseRunnerUids(req.source, asked, ids.uid, ids.uid);
  return { pool: { kind: 'user', user: { name: asked, ...ids } }, warning: null };
}

/** Outside a runner, a pool overlapping the runners' reserved uids is refused (RUNNER_AGENT_UIDS). */
export function refuseRunnerUids(source: string, asked: string, first: number, last: number): void {
  const { first: r1, last: r2 } = RUNNER_AGENT_UIDS;
  if (first <= r2 && last >= r1)
    throw new AgentUserError(`${source}: '${asked}' overlaps uids ${r1}-${r2}, which hosted runners' agents use; pass uids outside them`);
}

/** How a pool reads in messages. */
export function describePool(pool: AgentPoolSpec): string {
  if (pool.kind === 'named') return `${pool.prefix}-1…${pool.max}`;
  if (pool.kind === 'range') return `uids ${pool.first}-${pool.last}`;
  return pool.user.name;
}
