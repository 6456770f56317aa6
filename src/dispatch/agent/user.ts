// The user boundary (docs/trust.md "Threat model"): when svc runs as root it runs every agent as an
// unprivileged user, so the agent cannot read svc's environment (/proc/<svc>/environ), its state
// and config folders, or the credential broker's socket. Which user: `--agent-user`, else
// SVC_AGENT_USER, else the stored `agentUser`, else `svc-agent` when it exists, else `nobody`.
// `none` keeps the agent as svc's own user. A user other than svc's own needs root.
import { execa } from 'execa';

/** The user an agent runs as, resolved to ids (the child's uid/gid; groups are cleared). */
export interface AgentUser {
  name: string;
  uid: number;
  gid: number;
}

/** The user svc picks when svc is root and nothing was asked for, in this order. */
export const DEFAULT_AGENT_USERS = ['svc-agent', 'nobody'] as const;

/** A bad `--agent-user`: unknown user, root itself, or a switch that needs root. */
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
  /** Looks a user up; default: `id -u NAME` / `id -g NAME`, which also sees NSS users. */
  lookup?: (name: string) => Promise<{ uid: number; gid: number } | null>;
}

export interface AgentUserChoice {
  user: AgentUser | null;
  /** One line for the user when the agent keeps svc's rights although svc is root. */
  warning: string | null;
}

/** `id` knows every user the system knows (files, LDAP, ...); null when it knows none by that name. */
export async function lookupUser(name: string): Promise<{ uid: number; gid: number } | null> {
  const id = async (flag: string) => {
    const r = await execa('id', [flag, '--', name], { reject: false, stdin: 'ignore' });
    return r.exitCode === 0 && /^\d+$/.test(r.stdout.trim()) ? Number(r.stdout.trim()) : null;
  };
  const uid = await id('-u');
  const gid = uid === null ? null : await id('-g');
  return uid === null || gid === null ? null : { uid, gid };
}

/**
 * Resolves the agent user. Numeric `UID` or `UID:GID` work without a passwd entry (containers that
 * run with an arbitrary uid). Root as the agent user is refused: it is no boundary.
 */
export async function resolveAgentUser(req: AgentUserRequest): Promise<AgentUserChoice> {
  const lookup = req.lookup ?? lookupUser;
  const asked = req.asked?.trim();
  const root = req.uid === 0;
  if (asked === 'none') {
    return { user: null, warning: root ? `${req.source} none: agents run as root, with svc's own rights (they can read its environment, state and credential socket)` : null };
  }
  if (!asked) {
    if (!root) return { user: null, warning: null };
    for (const name of DEFAULT_AGENT_USERS) {
      const ids = await lookup(name);
      if (ids && ids.uid !== 0) return { user: { name, ...ids }, warning: null };
    }
    throw new AgentUserError(`svc runs as root and neither ${DEFAULT_AGENT_USERS.join(' nor ')} exists: create one (useradd --system svc-agent) or pass --agent-user NAME (none: no boundary)`);
  }
  const numeric = /^(\d+)(?::(\d+))?$/.exec(asked);
  const ids = numeric ? { uid: Number(numeric[1]), gid: Number(numeric[2] ?? numeric[1]) } : await lookup(asked);
  if (!ids) throw new AgentUserError(`${req.source}: no user '${asked}' on this system`);
  if (ids.uid === 0) throw new AgentUserError(`${req.source}: '${asked}' is root, which is no boundary; pass another user, or none`);
  if (ids.uid === req.uid) return { user: null, warning: null };
  if (!root) throw new AgentUserError(`${req.source} ${asked}: running agents as another user needs svc to run as root`);
  return { user: { name: asked, ...ids }, warning: null };
}
