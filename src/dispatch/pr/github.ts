// Pull requests through GitHub's REST API (hosted runs: the installation token from getGitCredential,
// which is narrowed to contents plus pull-request write). A pull request is found by its head
// first and updated, never opened twice; a 422 "A pull request already exists" (a race with
// another writer) is settled the same way.
import { apiBaseFor, originOf, type RemoteRepository } from './remote.js';
import { createGitHubRest, GitHubApiError, type GitHubRest, type GitHubRestOptions } from './github-rest.js';
import { PullRequestError, type PullRequestLeg, type PullRequestRef, type PullRequestWriter } from './types.js';

export interface GitHubWriterOptions extends Omit<GitHubRestOptions, 'baseUrl' | 'token'> {
  /** --github-api-url / SVC_GITHUB_API_URL; default from the repository's host. */
  apiUrl?: string | null;
  /** The token for `owner/name` (a hosted run: the broker's installation token). */
  tokenFor(repository: string): Promise<string>;
  /** The repository a clone pushes to; default: its `origin` remote. */
  remoteOf?(repoDir: string): Promise<RemoteRepository | null>;
}

interface PullRow {
  number: number;
  html_url: string;
}

export function createGitHubWriter(opts: GitHubWriterOptions): PullRequestWriter {
  const clients = new Map<string, GitHubRest>();
  const resolve = async (leg: PullRequestLeg): Promise<{ remote: RemoteRepository; api: GitHubRest; path: string }> => {
    const remote = await (opts.remoteOf ?? originOf)(leg.repo);
    if (!remote) throw new PullRequestError(`${leg.repo} has no GitHub remote named origin`);
    const repository = `${remote.owner}/${remote.name}`;
    const baseUrl = opts.apiUrl || apiBaseFor(remote.host);
    let api = clients.get(`${baseUrl} ${repository}`);
    if (!api) {
      api = createGitHubRest({ ...opts, baseUrl, token: () => opts.tokenFor(repository) });
      clients.set(`${baseUrl} ${repository}`, api);
    }
    return { remote, api, path: `/repos/${encodeURIComponent(remote.owner)}/${encodeURIComponent(remote.name)}` };
  };
  const openFor = async (api: GitHubRest, path: string, owner: string, branch: string): Promise<PullRow | null> => {
    const { data } = await api.call<PullRow[]>(`GET ${path}/pulls`, { head: `${owner}:${branch}`, state: 'open', per_page: 10 });
    return Array.isArray(data) && data.length > 0 ? data[0]! : null;
  };
  const deliveryNumber = (leg: PullRequestLeg, what: string): number => {
    if (!leg.delivery || !Number.isInteger(leg.delivery.number)) throw new PullRequestError(`${leg.key} has no pull request to ${what}`);
    return leg.delivery.number;
  };
  return {
    async openOrUpdatePullRequest(leg, body) {
      const { remote, api, path } = await resolve(leg);
      const title = `${leg.key}: ${leg.title}`;
      const update = async (pr: PullRow): Promise<PullRequestRef> => {
        await api.call(`PATCH ${path}/pulls/{pull_number}`, { pull_number: pr.number, title, body });
        return { action: 'updated', url: pr.html_url, number: pr.number };
      };
      const existing = await openFor(api, path, remote.owner, leg.branch);
      if (existing) return update(existing);
      let base = leg.delivery?.baseRef ?? null;
      if (!base) {
        const { data } = await api.call<{ default_branch?: string }>(`GET ${path}`);
        base = data.default_branch ?? leg.delivery?.defaultBranch ?? null;
      }
      if (!base) throw new PullRequestError(`GitHub named no default branch for ${remote.owner}/${remote.name}`);
      try {
        const { data } = await api.call<PullRow>(`POST ${path}/pulls`, { title, head: leg.branch, base, body, draft: leg.draft });
        return { action: 'opened', url: data.html_url, number: data.number };
      } catch (error) {
        // Another writer opened it between our list and our create: update theirs.
        if (error instanceof GitHubApiError && error.status === 422 && /already exists/i.test(error.message)) {
          const raced = await openFor(api, path, remote.owner, leg.branch);
          if (raced) return update(raced);
        }
        throw error;
      }
    },
    async postReview(leg, body) {
      const number = deliveryNumber(leg, 'review');
      const { api, path } = await resolve(leg);
      // Never APPROVE or REQUEST_CHANGES: svc's review is a comment a person weighs.
      const { data } = await api.call<{ html_url?: string }>(`POST ${path}/pulls/{pull_number}/reviews`, { pull_number: number, body, event: 'COMMENT' });
      return { action: 'reviewed', url: data.html_url ?? leg.delivery!.url, number };
    },
    async commentOnFix(leg, body) {
      const number = deliveryNumber(leg, 'comment on');
      const { api, path } = await resolve(leg);
      const { data } = await api.call<{ html_url?: string }>(`POST ${path}/issues/{issue_number}/comments`, { issue_number: number, body });
      return { action: 'commented', url: data.html_url ?? leg.delivery!.url, number };
    },
  };
}
