// A card's target repository. The contract leaves its shape open: `owner/name`, an `https://`
// (or `http://`) URL, an `ssh://` URL, or git's scp-like `user@host:owner/name.git`. The client (to
// match credentials, name clone folders, recognise an existing checkout) and the local service (to
// name the repository it hands a token for) read it the same way, so it lives beside the contract.

/** A repository reference, read: the host when the text names one, and its path (`owner/name`). */
export interface RepositoryRef {
  /** Lower-cased host name without port; null for a bare `owner/name`. */
  host: string | null;
  /** Path segments joined by `/`, without `.git` or surrounding slashes: `owner/name` (or deeper). */
  path: string;
}

const SCHEMES = new Set(['http:', 'https:', 'ssh:', 'git:', 'git+ssh:', 'ssh+git:']);
/** `[user@]host:path`, as git reads it: no `//` after the colon, no slash before it. */
const SCP_LIKE = /^(?:[^@/\s]+@)?([^:/\s]+):(?!\/\/)(.+)$/;

/** Reads a target repository; null when it is none of the accepted shapes. */
export function parseRepositoryRef(text: string): RepositoryRef | null {
  const t = text.trim();
  if (!t) return null;
  let host: string | null = null;
  let path: string;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(t)) {
    let url: URL;
    try {
      url = new URL(t);
    } catch {
      return null;
    }
    if (!SCHEMES.has(url.protocol) || !url.hostname) return null;
    host = url.hostname.toLowerCase();
    try {
      path = decodeURIComponent(url.pathname);
    } catch {
      return null;
    }
  } else {
    const scp = SCP_LIKE.exec(t);
    if (scp) {
      host = scp[1]!.toLowerCase();
      path = scp[2]!;
    } else {
      path = t;
    }
  }
  const segments = path
    .replace(/^\/+/, '')
    .replace(/\/+$/, '')
    .replace(/\.git$/i, '')
    .split('/');
  // Each segment becomes a folder name: nothing empty, nothing that climbs, no separators.
  if (segments.length < 2 || segments.some((s) => !s || s === '.' || s === '..' || /[\s\\:]/.test(s))) return null;
  return { host, path: segments.join('/') };
}

/**
 * Whether two references name the same repository: the same path (case-insensitively, as the big
 * hosts treat it), or one path ending in the other (`git/acme/shop` of a host that serves its
 * repositories under a prefix, and `acme/shop`); when both name a host, the hosts agree.
 */
export function sameRepository(a: string | RepositoryRef, b: string | RepositoryRef): boolean {
  const x = typeof a === 'string' ? parseRepositoryRef(a) : a;
  const y = typeof b === 'string' ? parseRepositoryRef(b) : b;
  if (!x || !y) return false;
  if (x.host && y.host && x.host !== y.host) return false;
  const p = x.path.toLowerCase();
  const q = y.path.toLowerCase();
  return p === q || p.endsWith(`/${q}`) || q.endsWith(`/${p}`);
}
