// Whose name the agents' commits carry (docs/dispatch.md, "Commits"): `--git-identity`, else the
// repository's own (its config, then the user's), else svc's documented bot. An agent that commits
// never fails for want of an identity (git's "Author identity unknown", exit 128): in CI and
// containers there is usually none.
import { lastValue, readGitConfig, type ConfigEntry } from './config-list.js';

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

/**
 * The identity agents are given, or null where git already has one for `repo` (its config, the
 * user's or the system's) and none was asked: then the agents' git finds it as svc's does.
 * `listing`: the repository's config where the caller read it already (config-list.ts).
 */
export async function agentIdentity(
  repo: string,
  asked: GitIdentity | undefined,
  env: NodeJS.ProcessEnv,
  listing?: Promise<ConfigEntry[] | null>,
): Promise<GitIdentity | null> {
  if (asked) return asked;
  // The agents' environment decides what git finds (their HOME, GIT_CONFIG_GLOBAL): it is svc's own.
  const entries = (await (listing ?? readGitConfig(repo, env))) ?? [];
  const [name, email] = [lastValue(entries, 'user.name').trim(), lastValue(entries, 'user.email').trim()];
  return name && email ? null : BOT_IDENTITY;
}

/** The environment that makes git author and commit as `id` (over any config the agent has). */
export function identityEnv(id: GitIdentity | null | undefined): Record<string, string> {
  if (!id) return {};
  return { GIT_AUTHOR_NAME: id.name, GIT_AUTHOR_EMAIL: id.email, GIT_COMMITTER_NAME: id.name, GIT_COMMITTER_EMAIL: id.email };
}
