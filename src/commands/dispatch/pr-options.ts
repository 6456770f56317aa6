// `--pr`, `--draft` and `--github-api-url` (docs/pull-requests.md): on by default for hosted runs,
// off for local ones unless stored (`svc config set pr true`). Precedence as everywhere: flag >
// environment > stored > default.
import type { Context } from '../context.js';
import { UsageError } from '../exit-codes.js';
import type { DispatchFlags } from './flags.js';

/** `pr` undefined: the default; false: `--no-pr`. */
export type PullRequestFlags = Pick<DispatchFlags, 'pr' | 'draft' | 'githubApiUrl'>;

export interface PullRequestOptions {
  pr: boolean;
  draft: boolean;
  /** null: from the repository's host (github.com → api.github.com, else https://HOST/api/v3). */
  githubApiUrl: string | null;
}

export function pullRequestOptions(flags: PullRequestFlags, ctx: Context, hosted: boolean): PullRequestOptions {
  const raw = flags.githubApiUrl ?? ctx.env.SVC_GITHUB_API_URL ?? ctx.config().get('githubApiUrl') ?? null;
  let githubApiUrl: string | null = null;
  if (raw) {
    const source = flags.githubApiUrl ? '--github-api-url' : ctx.env.SVC_GITHUB_API_URL ? 'SVC_GITHUB_API_URL' : 'the stored githubApiUrl';
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      throw new UsageError(`${source}: '${raw}' is not a URL (e.g. https://github.example.com/api/v3)`);
    }
    if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new UsageError(`${source}: '${raw}' is not an http(s) URL`);
    if (u.username || u.password) throw new UsageError(`${source}: a URL with credentials in it is refused`);
    // The installation token rides on every call: plain http only to this machine, or with --insecure.
    const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname);
    if (u.protocol === 'http:' && !loopback && !ctx.globals.insecure) {
      throw new UsageError(`${source}: refusing to send a GitHub token over plain http to ${u.host} (use https, or --insecure)`);
    }
    githubApiUrl = u.toString().replace(/\/+$/, '');
  }
  const pr = flags.pr ?? ctx.config().get('pr') ?? hosted;
  return { pr, draft: Boolean(flags.draft), githubApiUrl };
}
