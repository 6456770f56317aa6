// A local stand-in for the few GitHub REST endpoints svc uses (repository, list/create/update pull
// request, create review, create issue comment), on 127.0.0.1 only, recording every request so
// tests assert on the wire. Answers are shaped as GitHub's, 422 "already exists" included, and a
// queue of canned failures plays rate limits.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  authorization: string | null;
  body: Record<string, unknown> | null;
  rawBody: string;
  at: number;
}

export interface MockPull {
  number: number;
  head: string;
  base: string;
  title: string;
  body: string;
  draft: boolean;
  state: 'open' | 'closed';
}

export interface CannedAnswer {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

export interface GitHubMock {
  url: string;
  requests: RecordedRequest[];
  pulls(repository: string): MockPull[];
  reviews: Array<{ repository: string; number: number; body: string; event: string }>;
  comments: Array<{ repository: string; number: number; body: string }>;
  /** The next answers, before any real handling (rate limits, 5xx). */
  failNext(...answers: CannedAnswer[]): void;
  /** Lists answer empty this many times (another writer opened the PR after our list). */
  hideFromList(times: number): void;
  addPull(repository: string, pull: Omit<MockPull, 'number' | 'state'>): MockPull;
  close(): Promise<void>;
}

/** `token`: the one accepted, or a pattern (a hosted run's installation tokens are minted as it goes). */
export async function startGitHubMock(opts: { token: string | RegExp; defaultBranch?: string }): Promise<GitHubMock> {
  const requests: RecordedRequest[] = [];
  const pulls = new Map<string, MockPull[]>();
  const reviews: GitHubMock['reviews'] = [];
  const comments: GitHubMock['comments'] = [];
  const canned: CannedAnswer[] = [];
  let hidden = 0;
  let next = 1;
  let base = '';
  const pullsOf = (repo: string) => pulls.get(repo) ?? (pulls.set(repo, []), pulls.get(repo)!);
  const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'x-ratelimit-remaining': '4999', ...headers });
    res.end(body === undefined ? '' : JSON.stringify(body));
  };
  const view = (repo: string, p: MockPull) => ({
    number: p.number,
    html_url: `https://github.example.test/${repo}/pull/${p.number}`,
    state: p.state,
    draft: p.draft,
    title: p.title,
    body: p.body,
    head: { ref: p.head },
    base: { ref: p.base },
  });
  const addPull = (repo: string, p: Omit<MockPull, 'number' | 'state'>): MockPull => {
    const pull = { ...p, number: next++, state: 'open' as const };
    pullsOf(repo).push(pull);
    return pull;
  };

  const handle = (req: IncomingMessage, res: ServerResponse, raw: string) => {
    const u = new URL(req.url ?? '/', base);
    let body: Record<string, unknown> | null = null;
    try {
      body = raw ? (JSON.parse(raw) as Record<string, unknown>) : null;
    } catch {
      return json(res, 400, { message: 'Problems parsing JSON' });
    }
    requests.push({
      method: req.method ?? '',
      path: u.pathname,
      query: Object.fromEntries(u.searchParams),
      authorization: req.headers.authorization ?? null,
      body,
      rawBody: raw,
      at: Date.now(),
    });
    const c = canned.shift();
    if (c) return json(res, c.status, c.body ?? { message: 'canned' }, c.headers);
    const given = /^token (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
    const ok = typeof opts.token === 'string' ? given === opts.token : new RegExp(`^(?:${opts.token.source})$`).test(given);
    if (!ok) return json(res, 401, { message: 'Bad credentials' });
    const m = /^\/repos\/([^/]+)\/([^/]+)(\/.*)?$/.exec(u.pathname);
    if (!m) return json(res, 404, { message: 'Not Found' });
    const repo = `${m[1]}/${m[2]}`;
    const rest = m[3] ?? '';
    const method = req.method;
    if (method === 'GET' && rest === '') return json(res, 200, { full_name: repo, default_branch: opts.defaultBranch ?? 'main' });
    if (method === 'GET' && rest === '/pulls') {
      const head = u.searchParams.get('head');
      const state = u.searchParams.get('state') ?? 'open';
      if (hidden > 0) {
        hidden--;
        return json(res, 200, []);
      }
      const list = pullsOf(repo).filter((p) => (state === 'all' || p.state === state) && (!head || `${m[1]}:${p.head}` === head));
      return json(
        res,
        200,
        list.map((p) => view(repo, p)),
      );
    }
    if (method === 'POST' && rest === '/pulls') {
      const b = body ?? {};
      if (typeof b.title !== 'string' || typeof b.head !== 'string' || typeof b.base !== 'string')
        return json(res, 422, { message: 'Validation Failed', errors: [{ message: 'missing field' }] });
      if (pullsOf(repo).some((p) => p.state === 'open' && p.head === b.head)) {
        return json(res, 422, {
          message: 'Validation Failed',
          errors: [{ resource: 'PullRequest', code: 'custom', message: `A pull request already exists for ${m[1]}:${b.head}.` }],
        });
      }
      const p = addPull(repo, { head: b.head, base: b.base, title: b.title, body: String(b.body ?? ''), draft: b.draft === true });
      return json(res, 201, view(repo, p));
    }
    const pm = /^\/pulls\/(\d+)(\/reviews)?$/.exec(rest);
    const p = pm ? pullsOf(repo).find((x) => x.number === Number(pm[1])) : undefined;
    if (pm && !p) return json(res, 404, { message: 'Not Found' });
    if (method === 'PATCH' && pm && !pm[2]) {
      if (typeof body?.title === 'string') p!.title = body.title;
      if (typeof body?.body === 'string') p!.body = body.body;
      return json(res, 200, view(repo, p!));
    }
    if (method === 'POST' && pm && pm[2]) {
      const event = String(body?.event ?? '');
      if (!['COMMENT', 'APPROVE', 'REQUEST_CHANGES'].includes(event)) return json(res, 422, { message: 'Validation Failed' });
      reviews.push({ repository: repo, number: p!.number, body: String(body?.body ?? ''), event });
      return json(res, 200, {
        id: reviews.length,
        state: 'COMMENTED',
        html_url: `https://github.example.test/${repo}/pull/${p!.number}#pullrequestreview-${reviews.length}`,
      });
    }
    const cm = /^\/issues\/(\d+)\/comments$/.exec(rest);
    if (method === 'POST' && cm) {
      comments.push({ repository: repo, number: Number(cm[1]), body: String(body?.body ?? '') });
      return json(res, 201, { id: comments.length, html_url: `https://github.example.test/${repo}/pull/${cm[1]}#issuecomment-${comments.length}` });
    }
    return json(res, 404, { message: 'Not Found' });
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    requests,
    pulls: (repo) => pullsOf(repo),
    reviews,
    comments,
    failNext: (...a) => void canned.push(...a),
    hideFromList: (n) => void (hidden = n),
    addPull,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
