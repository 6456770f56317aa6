// Whose name the agents' commits carry (docs/dispatch.md, "Commits"): `--git-identity`, else the
// repository's own (its config, then the user's), else svc's documented bot. An agent that commits
// never fails for want of an identity (git's "Author identity unknown", exit 128): in CI and
// containers there is usually none.
import { gitAnswer } from './worktree.js';

export interface GitIdentity {
  name: string;
  email: string;
}

/** The identity of agents' commits where the repository and the user have none. */
export const BOT_IDENTITY: GitIdentity = { name: 'svc-agent', email: 'svc-agent@localhost' };

/** `Name <email>`, as git writes an author; null when `text` is not one. */
export function parseIdentity(text: string): GitIdentity | null {
  const m = /^\s*([^<>\n]*?)\s*<([^<>\s@]+@[^<>\s]+)>\s*$/.exec(text);
  return m?.[1] ? { name: m[1], email: m[2]! } : null;
}

async function configValue(repo: string, key: string, env: NodeJS.ProcessEnv): Promise<string> {
  const r = await gitAnswer(repo, ['config', '--get', key], { env });
  return r.ok ? r.stdout.trim() : '';
}

/**
 * The identity agents are given, or null where git already has one for `repo` (its config, the
 * user's or the system's) and none was asked: then the agents' git finds it as svc's does.
 */
export async function agentIdentity(repo: string, asked: GitIdentity | undefined, env: NodeJS.ProcessEnv): Promise<GitIdentity | null> {
  if (asked) return asked;
  // The agents' environment decides what git finds (their HOME, GIT_CONFIG_GLOBAL): it is svc's own.
  const [name, email] = await Promise.all([configValue(repo, 'user.name', env), configValue(repo, 'user.email', env)]);
  return name && email ? null : BOT_IDENTITY;
}

/** The environment that makes git author and commit as `id` (over any config the agent has). */
export function identityEnv(id: GitIdentity | null | undefined): Record<string, string> {
  if (!id) return {};
  return { GIT_AUTHOR_NAME: id.name, GIT_AUTHOR_EMAIL: id.email, GIT_COMMITTER_NAME: id.name, GIT_COMMITTER_EMAIL: id.email };
}
