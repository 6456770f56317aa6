// The repository's git configuration as git itself resolves it (every scope, included files too),
// read in one git process for the questions a run asks at its start: whose identity the agents'
// commits carry (identity.ts) and whether the local config holds a credential (config-credentials.ts).
// One listing where each question had its own git process (three at every run's start).
import { gitAnswer } from './run-git.js';

/** One `key=value` of the listing, with the scope git read it from (an included file's is its includer's). */
export interface ConfigEntry {
  scope: string;
  key: string;
  value: string;
}

/** The listing, in git's order (later entries override earlier ones); null where git could not read it. */
export async function readGitConfig(repo: string, env?: NodeJS.ProcessEnv): Promise<ConfigEntry[] | null> {
  const r = await gitAnswer(repo, ['config', '--list', '--show-scope', '--includes', '--null'], env ? { env } : {});
  if (!r.ok) return null;
  // `scope NUL key LF value NUL`, repeated; a key given without a value has no LF.
  const parts = r.stdout.split('\0');
  const out: ConfigEntry[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const entry = parts[i + 1]!;
    const nl = entry.indexOf('\n');
    out.push({ scope: parts[i]!, key: nl < 0 ? entry : entry.slice(0, nl), value: nl < 0 ? '' : entry.slice(nl + 1) });
  }
  return out;
}

/** The value git would answer `git config --get key` with (the last one), or ''. Keys compare without case. */
export function lastValue(entries: readonly ConfigEntry[], key: string): string {
  const k = key.toLowerCase();
  for (let i = entries.length - 1; i >= 0; i--) if (entries[i]!.key.toLowerCase() === k) return entries[i]!.value;
  return '';
}
