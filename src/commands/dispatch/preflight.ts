// What would make every leg fail, checked before a run is opened: a --repo that is no
// git repository, an agent program that is not there, a project that does not exist. Each is one
// line and the documented exit code, and no run is opened; without these a newcomer got an open
// run whose every leg failed with a multi-line execa dump.
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { ApiError, SvcError } from '../../api/errors.js';
import type { ApiClient } from '../../api/client.js';
import type { AgentChoice } from '../../dispatch/agent/presets.js';
import type { RepoHead } from '../../dispatch/git/worktree.js';
import { AGENT_PRESETS, isAgentName, loadEngine, splitCommand } from '../../dispatch/index.js';
import { UsageError } from '../exit-codes.js';

/** A project (or run) the service says does not exist: exit 4. */
export class NotFoundError extends SvcError {
  readonly kind = 'notFound';
}

/** git itself is not there: every leg needs a worktree (or a checkout), so nothing could run. */
export const gitMissing = (): UsageError => new UsageError('git was not found on PATH: svc runs agents in git worktrees, so it needs git installed');

/**
 * `where` names the repository as the user gave it: `--repo DIR`, SVC_REPO, or the current directory.
 * `fromHead`: the legs branch from HEAD (all but fix and review, which start at a fetched head), so
 * a repository without a commit yet could run none of them.
 */
export async function checkRepository(repo: string, where: string, fromHead = true): Promise<RepoHead | null> {
  let isDir = false;
  try {
    isDir = statSync(repo).isDirectory();
  } catch {
    // Missing: said below.
  }
  if (!isDir) throw new UsageError(`${where} ${repo} is not a directory: pass --repo DIR, a git repository`);
  // One git process for these questions, the run's base (resolveBase) and the repository's folders
  // (repoPaths: the worktrees' root, the workflow file in the tree): an unborn HEAD still prints
  // the first three, then fails.
  const { gitAnswer, repoPaths } = await loadEngine();
  const r = await gitAnswer(repo, [
    'rev-parse',
    '--is-inside-work-tree',
    '--path-format=absolute',
    '--show-toplevel',
    '--git-common-dir',
    'HEAD',
    '--abbrev-ref',
    'HEAD',
  ]);
  if (r.missing) throw gitMissing();
  const [inside, top, common, sha, name] = r.stdout.split('\n');
  if (inside !== 'true') {
    throw new UsageError(`${where} ${repo} is not a git repository: pass --repo DIR, or \`git init\` it first`);
  }
  if (top && common) void repoPaths(repo, { top, common });
  if (!r.ok && fromHead) {
    throw new UsageError(`${where} ${repo} has no commit yet: agents branch from HEAD, so commit something first`);
  }
  return r.ok && sha && name ? { sha, name } : null;
}

/**
 * Uncommitted changes (untracked files included) never reach the agents: each leg branches from
 * HEAD in a worktree of its own. Returns the one line that says so, or null for a clean tree.
 * `--no-worktree` checks each card's branch out over them: refused here, before any run opens.
 */
export async function checkWorkingTree(repo: string, inPlace: boolean): Promise<string | null> {
  const { gitAnswer } = await loadEngine();
  const r = await gitAnswer(repo, ['status', '--porcelain', '--untracked-files=normal']);
  const changed = r.ok ? r.stdout.split('\n').filter(Boolean).length : 0;
  if (changed === 0) return null;
  const what = `${repo} has uncommitted changes (${changed} ${changed === 1 ? 'file' : 'files'})`;
  if (inPlace) throw new UsageError(`${what} and --no-worktree checks each card's branch out in it: commit or stash them first, or run without --no-worktree`);
  return `warning: ${what}: agents branch from HEAD and do not see them; commit them first if the agents need them`;
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/** The full path of `program` on `path` (a PATH value), or null. */
export function findOnPath(program: string, path: string | undefined): string | null {
  for (const dir of (path ?? '').split(delimiter)) {
    if (dir && executable(join(dir, program))) return join(dir, program);
  }
  return null;
}

/**
 * The agent's program exists: a preset's program on PATH, `--agent-cmd`'s first word on PATH or,
 * when it names a path, as a file (a relative path is taken from the repository, where the agent
 * starts). A first word with a placeholder (`{workdir}/agent.sh`) is known only per leg: not checked.
 */
export function checkAgentProgram(choice: AgentChoice, repo: string, path: string | undefined): void {
  let program: string | undefined;
  let flag: string;
  if (choice.agentCmd !== undefined) {
    program = splitCommand(choice.agentCmd)[0];
    flag = '--agent-cmd';
    if (!program) throw new UsageError('--agent-cmd is empty: give the program to run and its arguments');
  } else if (choice.agent && isAgentName(choice.agent)) {
    program = AGENT_PRESETS[choice.agent].argv[0]!;
    flag = `--agent ${choice.agent}`;
  } else {
    return;
  }
  if (program.includes('{')) return;
  if (program.includes('/')) {
    const file = isAbsolute(program) ? program : resolve(repo, program);
    if (!executable(file)) throw new UsageError(`${flag}: ${program} is not an executable file${isAbsolute(program) ? '' : ` (looked in ${repo})`}`);
    return;
  }
  if (!findOnPath(program, path)) {
    const hint =
      choice.agentCmd === undefined
        ? `: install ${AGENT_PRESETS[choice.agent as keyof typeof AGENT_PRESETS].title}, or pick another with --agent / --agent-cmd`
        : '';
    throw new UsageError(`${flag}: ${program} is not on PATH${hint}`);
  }
}

/** The project exists on the service (getProject): a 404 is one line naming it, exit 4. */
export async function checkProject(api: Pick<ApiClient, 'getProject'>, projectKey: string): Promise<void> {
  try {
    await api.getProject(projectKey);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      throw new NotFoundError(`project ${projectKey} not found on the service (\`svc projects\` lists the ones this token sees)`);
    }
    throw error;
  }
}
