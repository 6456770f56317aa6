// The agent's own settings and logins cross the boundary (docs/agents.md): an agent user gets a
// fresh home per leg, so the invoking user's `~/.claude*`, `~/.codex` (or CODEX_HOME), `~/.gemini`,
// aider's and opencode's configuration are copied into it before the leg's folder is handed over,
// and the variables that named the originals name the copies. Session histories and caches stay
// behind: they can be large, and they are the invoking user's, not the leg's. What an agent writes
// into its copy (a refreshed login) stays with the leg.
import { lstatSync } from 'node:fs';
import { cp, lstat } from 'node:fs/promises';
import { basename, join } from 'node:path';

interface Setting {
  /** The original, from svc's home or the variable that overrides it. */
  from(home: string, env: Readonly<Record<string, string | undefined>>): string | undefined;
  /** Where the copy goes, relative to the leg's home. */
  to: string;
  /** The variable that must name the copy, when the original was named by it. */
  variable?: string;
  /** Entries of a folder that are histories or caches, not settings. */
  skip?: readonly string[];
}

const SETTINGS: readonly Setting[] = [
  {
    from: (h, e) => e.CLAUDE_CONFIG_DIR ?? join(h, '.claude'),
    to: '.claude',
    variable: 'CLAUDE_CONFIG_DIR',
    skip: ['projects', 'todos', 'shell-snapshots', 'statsig', 'logs', 'ide', 'file-history', 'debug', 'session-env'],
  },
  { from: (h, e) => (e.CLAUDE_CONFIG_DIR ? undefined : join(h, '.claude.json')), to: '.claude.json' },
  { from: (h, e) => e.CODEX_HOME ?? join(h, '.codex'), to: '.codex', variable: 'CODEX_HOME', skip: ['sessions', 'archived_sessions', 'log', 'history.jsonl'] },
  { from: (h) => join(h, '.gemini'), to: '.gemini', skip: ['tmp', 'history'] },
  { from: (h) => join(h, '.aider.conf.yml'), to: '.aider.conf.yml' },
  { from: (h, e) => join(e.XDG_CONFIG_HOME ?? join(h, '.config'), 'opencode'), to: '.config/opencode', variable: 'OPENCODE_CONFIG_DIR' },
  { from: (h, e) => join(e.XDG_DATA_HOME ?? join(h, '.local', 'share'), 'opencode', 'auth.json'), to: '.local/share/opencode/auth.json' },
  { from: (_h, e) => e.OPENCODE_CONFIG, to: '.config/opencode-config.json', variable: 'OPENCODE_CONFIG' },
];

/**
 * What is at `path`, if anything. Synchronous and with no error built for a path that is not
 * there: most legs find none of the settings, and an error object per miss cost a leg ~2 ms.
 */
function found(path: string) {
  try {
    return lstatSync(path, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

/**
 * Copies the agents' settings of `home` (svc's own) into `legHome`, which svc still owns and
 * nothing of the agent's has touched yet. Returns the variables to set in the agent's environment.
 * Symbolic links are copied as links, never followed.
 */
export async function copyAgentSettings(
  home: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
  legHome: string,
): Promise<Record<string, string>> {
  const vars: Record<string, string> = {};
  if (!home) return vars;
  for (const s of SETTINGS) {
    const from = s.from(home, env);
    const st = from ? found(from) : undefined;
    if (!from || !st || !(st.isFile() || st.isDirectory())) continue;
    const to = join(legHome, s.to);
    const skip = new Set(s.skip ?? []);
    await cp(from, to, {
      recursive: true,
      dereference: false,
      verbatimSymlinks: true,
      // Top-level histories and caches stay behind; sockets, fifos and devices are no settings.
      filter: async (src) => {
        if (src !== from && skip.has(basename(src)) && src.slice(from.length + 1) === basename(src)) return false;
        const entry = await lstat(src).catch(() => null);
        return Boolean(entry && (entry.isFile() || entry.isDirectory() || entry.isSymbolicLink()));
      },
    });
    // Where no variable named it, the default place under the leg's HOME (and XDG_*) is the copy.
    if (s.variable && env[s.variable] !== undefined) vars[s.variable] = to;
  }
  return vars;
}
