// Credentials in the repository's own git config: `actions/checkout` writes the job's
// token into `.git/config` as `http.https://github.com/.extraheader` unless told not to, and a
// clone URL may carry `user:token@`. An agent can read that file: as svc's own user it is the
// owner's, and through the boundary the agent's clone borrows the repository's objects (where the
// agent user can read them), its `origin` names the repository, and git writes `.git/config`
// world-readable. svc cannot hide the file without breaking the agent's clone (git refuses a
// repository whose config it cannot read) or changing the user's repository, so it says so.
import { readGitConfig, type ConfigEntry } from './config-list.js';

const HEADER = /^http\.(.+\.)?extraheader$/i;
const URL_KEY = /^remote\..+\.(push)?url$/i;
const INSTEAD_OF = /^url\.(.+)\.(push)?insteadof$/i;

function hasPassword(url: string): boolean {
  try {
    return new URL(url).password !== '';
  } catch {
    return false;
  }
}

/** A key as it may be printed: a URL in it loses its user part (a subsection can hold a token too). */
const shown = (key: string): string => key.replace(/\/\/[^/@\s]*@/g, '//…@');

/**
 * The keys of the repository's local git config that hold a credential an agent could read: every
 * `http[.<url>].extraheader`, and remote URLs (or `url.<base>.insteadOf` bases) with a password,
 * in included files too (newer actions/checkout releases keep the header in one, named by an
 * `includeIf`). Only key names are returned, never a value; a repository git cannot read gives none.
 * `listing`: the repository's config where the caller read it already (config-list.ts).
 */
export async function credentialsInGitConfig(repo: string, listing?: Promise<ConfigEntry[] | null>): Promise<string[]> {
  const entries = await (listing ?? readGitConfig(repo));
  if (!entries) return [];
  const keys = new Set<string>();
  // The repository's own config and the files it includes: what an agent's clone can read.
  for (const { scope, key, value } of entries) {
    if (scope !== 'local') continue;
    const base = INSTEAD_OF.exec(key)?.[1];
    if (HEADER.test(key) || (URL_KEY.test(key) && hasPassword(value)) || (base !== undefined && hasPassword(base))) keys.add(shown(key));
  }
  return [...keys];
}

/** The one line svc says at the start of a run when `keys` is not empty. */
export function gitCredentialsWarning(repo: string, keys: readonly string[]): string {
  return `warning: ${repo}'s git config holds a credential the agents can read (${keys.join(', ')}): remove it (actions/checkout: persist-credentials: false) and give git its credentials another way`;
}
