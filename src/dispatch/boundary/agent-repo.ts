// The agent's repository, made by root in the leg's folder before the hand-over (./clone.ts): what
// `git clone --shared --branch B` leaves there (objects borrowed through alternates, `origin`, B,
// svc's identity), written as files. The leg's uid finishes it as the leg starts, in the shell
// that runs the agent (./leg-shell.ts): origin's branches and the tags from one `for-each-ref`,
// B's upstream, and the checkout (`git read-tree -u`). A clone asks the repository for its refs
// through `upload-pack`, a round trip of two more processes that cost a leg about 6 ms
// (docs/trust.md, "What it costs").
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { askOnce, repoPaths } from '../git/run-git.js';
import { svcGit } from './leg-folder.js';

/** What every leg's repository takes from the source repository, asked once per svc process. */
export interface SourceRepo {
  /** The git dir shared by all its worktrees: the clone's `origin` and the owner of the objects. */
  common: string;
  /** `sha1` or `sha256`: the agent's repository must read the objects the same way. */
  objectFormat: string;
  /** The branch the source's HEAD names (`refs/heads/…`), or for a detached HEAD git's guess (`guessedHead`): `origin/HEAD`. */
  headRef: string;
}

const sources = new Map<string, Promise<SourceRepo>>();

/** The repository's git dir and the facts the agent's repository copies (`repo` may be a folder inside the work tree). */
export function sourceRepo(repo: string): Promise<SourceRepo> {
  return askOnce(sources, repo, async () => {
    // The run's first rev-parse answered it already (repoPaths).
    const { common } = await repoPaths(repo);
    // The common dir's own HEAD, as a clone of it would see it (not a linked worktree's).
    const [objectFormat = 'sha1', head = ''] = (
      await svcGit(common, ['--git-dir=.', 'rev-parse', '--show-object-format', '--symbolic-full-name', 'HEAD'])
    ).split('\n');
    return { common, objectFormat, headRef: head.startsWith('refs/heads/') ? head : await guessedHead(common) };
  });
}

/**
 * The branch `git clone` takes for origin's HEAD when the source's HEAD is detached (a CI
 * checkout): `master` where it points at HEAD's commit, else the first branch that does, else none
 * (the cloning user's `init.defaultBranch` would come first; the agent's fresh home sets none).
 */
async function guessedHead(common: string): Promise<string> {
  const at = (await svcGit(common, ['--git-dir=.', 'for-each-ref', '--points-at=HEAD', '--format=%(refname)', 'refs/heads'])).split('\n').filter(Boolean);
  return at.includes('refs/heads/master') ? 'refs/heads/master' : (at[0] ?? '');
}

export interface AgentRepoSpec {
  source: SourceRepo;
  identity: { name: string; email: string };
}

/** A value in git's config syntax: quoted, with its backslashes and quotes escaped. */
export const gitValue = (v: string): string => `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

/** B's upstream on origin, as `git clone --branch B` configures it: added by the leg's uid where origin has B. */
export const trackingConfig = (branch: string): string => `[branch ${gitValue(branch)}]\n\tremote = origin\n\tmerge = ${gitValue(`refs/heads/${branch}`)}\n`;

/**
 * Writes the agent's repository into `workdir` (which must not exist): `.git` only, without HEAD
 * (`pointAgentRepo` adds it and B once the card's worktree is there), no index and no files (the
 * leg's uid adds the rest, ./leg-shell.ts). Root's own folder, before the hand-over: every file is
 * created here (`wx`), none is followed.
 */
export function writeAgentRepo(workdir: string, spec: AgentRepoSpec): void {
  const { source, identity } = spec;
  const git = join(workdir, '.git');
  mkdirSync(workdir, { mode: 0o755 });
  // What git needs to know a repository (HEAD, objects, refs) and what a clone adds; git makes the rest as it needs it.
  for (const dir of ['', 'objects', 'objects/info', 'refs', ...(source.headRef ? ['refs/remotes', 'refs/remotes/origin'] : [])])
    mkdirSync(join(git, dir), { mode: 0o755 });
  const put = (name: string, text: string) => writeFileSync(join(git, name), text, { mode: 0o644, flag: 'wx' });
  const sha256 = source.objectFormat !== 'sha1';
  const user = [identity.name && `\tname = ${gitValue(identity.name)}\n`, identity.email && `\temail = ${gitValue(identity.email)}\n`].join('');
  put(
    'config',
    [
      `[core]\n\trepositoryformatversion = ${sha256 ? 1 : 0}\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n`,
      sha256 ? `[extensions]\n\tobjectformat = ${source.objectFormat}\n` : '',
      user ? `[user]\n${user}` : '',
      `[remote "origin"]\n\turl = ${gitValue(source.common)}\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n`,
    ].join(''),
  );
  put('objects/info/alternates', `${join(source.common, 'objects')}\n`);
  // A shallow source's clone is shallow where it is: without the list, history ends in missing parents.
  const shallow = readOptional(join(source.common, 'shallow'));
  if (shallow) put('shallow', shallow);
  if (source.headRef) put('refs/remotes/origin/HEAD', `ref: refs/remotes/origin/${source.headRef.slice('refs/heads/'.length)}\n`);
}

/**
 * Puts B at `head` and HEAD on B in the repository `writeAgentRepo` wrote, still before the
 * hand-over. B is the only ref in the packed refs, which the leg's uid extends with origin's
 * branches and the tags (all sorting after refs/heads/). No peeled lines are claimed: git peels a
 * tag when asked to.
 */
export function pointAgentRepo(workdir: string, branch: string, head: string): void {
  const git = join(workdir, '.git');
  writeFileSync(join(git, 'packed-refs'), `# pack-refs with: sorted \n${head} refs/heads/${branch}\n`, { mode: 0o644, flag: 'wx' });
  writeFileSync(join(git, 'HEAD'), `ref: refs/heads/${branch}\n`, { mode: 0o644, flag: 'wx' });
}

function readOptional(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
