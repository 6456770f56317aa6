// Which GitHub repository a git remote names, and where its REST API lives. Supported hosts:
// github.com and GitHub Enterprise Server (any other host, with its API at https://HOST/api/v3 or
// --github-api-url). A remote that names no owner/name pair is no pull-request host at all.
import { run } from '../process/run.js';

export interface RemoteRepository {
  /** host[:port], lower case. */
  host: string;
  owner: string;
  name: string;
  /** https://HOST/OWNER/NAME, the repository's web page. */
  webUrl: string;
}

/** Parses https, ssh (`ssh://git@host/o/n.git`) and scp-style (`git@host:o/n.git`) remotes. */
export function parseRemote(url: string): RemoteRepository | null {
  let host: string;
  let path: string;
  const scp = /^(?:[^@/\s]+@)?([^:/\s]+):(?!\/)(.+)$/.exec(url);
  if (!url.includes('://') && scp) {
    host = scp[1]!;
    path = scp[2]!;
  } else {
    try {
      const u = new URL(url);
      if (!['http:', 'https:', 'ssh:', 'git:'].includes(u.protocol)) return null;
      host = u.protocol === 'ssh:' ? u.hostname : u.host;
      path = decodeURIComponent(u.pathname);
    } catch {
      return null;
    }
  }
  const parts = path
    .replace(/\.git\/?$/, '')
    .split('/')
    .filter(Boolean);
  if (parts.length < 2) return null;
  const [owner, name] = parts.slice(-2) as [string, string];
  host = host.toLowerCase();
  return { host, owner, name, webUrl: `https://${host}/${owner}/${name}` };
}

/** github.com → https://api.github.com; any other host → https://HOST/api/v3 (GitHub Enterprise Server). */
export function apiBaseFor(host: string): string {
  const h = host.toLowerCase();
  return h === 'github.com' || h === 'www.github.com' ? 'https://api.github.com' : `https://${h}/api/v3`;
}

/** The `origin` remote of `repo`, parsed; null when there is none or it names no repository. */
export async function originOf(repo: string, remote = 'origin'): Promise<RemoteRepository | null> {
  // -C against svc's own folder, as before: a relative `repo` is svc's cwd's.
  const r = await run('git', ['-C', repo, 'remote', 'get-url', remote], { cwd: process.cwd(), maxBuffer: 1 << 20, timeoutMs: 0 });
  return r.code === 0 ? parseRemote(r.stdout.trim()) : null;
}

/** The page where GitHub offers to open a pull request from `branch` (into `base` when known). */
export function compareUrl(remote: RemoteRepository, branch: string, base: string | null): string {
  const range = base ? `${encodeURIComponent(base)}...${encodeURIComponent(branch)}` : encodeURIComponent(branch);
  return `${remote.webUrl}/compare/${range.replace(/%2F/g, '/')}?expand=1`;
}
