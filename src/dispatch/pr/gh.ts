// Pull requests on local runs, through the user's own `gh` (their login, their host). Bodies go
// through `--body-file` in a private temporary folder, never argv: a body holds an agent's words.
// When gh is missing, not logged in to the remote's host, or the remote is not a GitHub one, the
// writer answers a one-line hint (GitHub's compare page where there is one) instead of failing.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run as runProgram } from '../process/run.js';
import { compareUrl, originOf, type RemoteRepository } from './remote.js';
import { PullRequestError, type PullRequestLeg, type PullRequestRef, type PullRequestWriter } from './types.js';

export interface GhWriterOptions {
  /** The gh program (default `gh` on PATH). */
  gh?: string;
  /** svc's environment; SVC_* credentials are removed before gh sees it. */
  env: Record<string, string | undefined>;
  redact(text: string): string;
  remoteOf?(repoDir: string): Promise<RemoteRepository | null>;
}

/** gh's environment: svc's credentials stay with svc, and gh never prompts. */
function ghEnv(env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && !/^SVC_/.test(k)) out[k] = v;
  return { ...out, GH_PROMPT_DISABLED: '1', GH_NO_UPDATE_NOTIFIER: '1', NO_COLOR: '1' };
}

export function createGhWriter(opts: GhWriterOptions): PullRequestWriter {
  const gh = opts.gh ?? 'gh';
  const env = ghEnv(opts.env);
  const usable = new Map<string, Promise<boolean>>();
  const run = ghRunner(gh, env, opts.redact);
  /** gh is installed and logged in to `host` (checked once per host). */
  const ghFor = (host: string, cwd: string): Promise<boolean> => {
    let p = usable.get(host);
    if (!p) {
      p = runProgram(gh, ['auth', 'status', '--hostname', host], { cwd, env, timeoutMs: 0 }).then((r) => r.code === 0);
      usable.set(host, p);
    }
    return p;
  };
  const target = async (leg: PullRequestLeg): Promise<{ remote: RemoteRepository | null; repoArg: string | null }> => {
    const remote = await (opts.remoteOf ?? originOf)(leg.repo);
    if (!remote || !(await ghFor(remote.host, leg.repo))) return { remote, repoArg: null };
    return { remote, repoArg: `${remote.host}/${remote.owner}/${remote.name}` };
  };
  return {
    async openOrUpdatePullRequest(leg, body) {
      const { remote, repoArg } = await target(leg);
      if (!repoArg) return hint(leg, remote, 'pull request');
      const title = opts.redact(`${leg.key}: ${leg.title}`);
      const listed = await run(['pr', 'list', '--repo', repoArg, '--head', leg.branch, '--state', 'open', '--json', 'number,url', '--limit', '1'], leg.repo);
      const open = (JSON.parse(listed || '[]') as Array<{ number: number; url: string }>)[0];
      if (open) {
        await withBody(body, (file) => run(['pr', 'edit', String(open.number), '--repo', repoArg, '--title', title, '--body-file', file], leg.repo));
        return { action: 'updated', url: open.url, number: open.number };
      }
      const base = leg.delivery?.baseRef;
      const out = await withBody(body, (file) =>
        run(
          [
            'pr',
            'create',
            '--repo',
            repoArg,
            '--head',
            leg.branch,
            ...(base ? ['--base', base] : []),
            '--title',
            title,
            '--body-file',
            file,
            ...(leg.draft ? ['--draft'] : []),
          ],
          leg.repo,
        ),
      );
      const url =
        out
          .split('\n')
          .reverse()
          .find((l) => /^https?:\/\//.test(l.trim()))
          ?.trim() ?? null;
      const number = url ? Number(/\/pull\/(\d+)/.exec(url)?.[1] ?? NaN) : NaN;
      return { action: 'opened', url, number: Number.isInteger(number) ? number : null };
    },
    async postReview(leg, body) {
      const number = deliveryNumber(leg, 'review');
      const { remote, repoArg } = await target(leg);
      if (!repoArg) return hint(leg, remote, 'review');
      await withBody(body, (file) => run(['pr', 'review', String(number), '--repo', repoArg, '--comment', '--body-file', file], leg.repo));
      return { action: 'reviewed', url: leg.delivery!.url, number };
    },
    async commentOnFix(leg, body) {
      const number = deliveryNumber(leg, 'comment on');
      const { remote, repoArg } = await target(leg);
      if (!repoArg) return hint(leg, remote, 'comment');
      const out = await withBody(body, (file) => run(['pr', 'comment', String(number), '--repo', repoArg, '--body-file', file], leg.repo));
      const url = out
        .split('\n')
        .reverse()
        .find((l) => /^https?:\/\//.test(l.trim()))
        ?.trim();
      return { action: 'commented', url: url ?? leg.delivery!.url, number };
    },
  };
}

/** Runs `fn` with `body` in a private file, removed after (gh reads a body from a file). */
async function withBody<T>(body: string, fn: (file: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-pr-'));
  try {
    const file = join(dir, 'body.md');
    writeFileSync(file, body, { mode: 0o600 });
    return await fn(file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What to do by hand when gh cannot write the `what` (no gh, not logged in, not GitHub). */
function hint(leg: PullRequestLeg, remote: RemoteRepository | null, what: string): PullRequestRef {
  if (!remote) return { action: 'hint', url: null, number: null, hint: `${leg.key}: origin names no repository, so no ${what} was written` };
  // Without gh's login svc cannot tell a GitHub Enterprise host from another forge: only hosts
  // that say GitHub get a compare link, the rest a plain note (docs/pull-requests.md).
  if (!/(^|\.)github\.|github/.test(remote.host)) {
    return {
      action: 'hint',
      url: null,
      number: null,
      hint: `${leg.key}: ${remote.host} is not a GitHub host gh is logged in to; open a ${what} for ${leg.branch} there`,
    };
  }
  const url = what === 'pull request' ? compareUrl(remote, leg.branch, leg.delivery?.baseRef ?? null) : (leg.delivery?.url ?? remote.webUrl);
  return {
    action: 'hint',
    url,
    number: null,
    hint: `${leg.key}: gh is not installed or not logged in to ${remote.host}; ${what === 'pull request' ? 'open the pull request at' : `post the ${what} at`} ${url}`,
  };
}

function deliveryNumber(leg: PullRequestLeg, what: string): number {
  if (!leg.delivery || !Number.isInteger(leg.delivery.number)) throw new PullRequestError(`${leg.key} has no pull request to ${what}`);
  return leg.delivery.number;
}

/** Runs gh with `args` in `cwd`: its stdout, or a PullRequestError with its first line, redacted. */
function ghRunner(gh: string, env: Record<string, string>, redact: (text: string) => string) {
  return async (args: string[], cwd: string): Promise<string> => {
    // The environment is exactly `env` (gh's own settings, no token of svc's), stdin /dev/null.
    const r = await runProgram(gh, args, { cwd, env, timeoutMs: 0 });
    if (r.code !== 0) {
      const why =
        redact(`${r.stderr || r.stdout || (r.signal ? `killed by ${r.signal}` : `exit ${r.code}`)}`)
          .split('\n')
          .filter(Boolean)[0] ?? 'failed';
      throw new PullRequestError(`gh ${args[0]} ${args[1] ?? ''}: ${why}`.replace(/ +:/, ':'));
    }
    return String(r.stdout).trim();
  };
}
