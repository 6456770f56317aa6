// Reading the policy: from the base commit the legs start from (`git show <base>:.svc/workflow.yml`),
// never from a worktree, so an agent that edits the file changes nothing for its own leg, nor for
// a later leg of its branch. The working tree's copy only feeds a hint when it differs.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoPaths } from '../git/run-git.js';
import { run } from '../process/run.js';
import { WORKFLOW_FILE, type Workflow, type WorkflowProblem } from './policy.js';

/** The file has mistakes: each with its line; `where` names the file as it was read. */
export class WorkflowFileError extends Error {
  override readonly name = 'WorkflowFileError';
  constructor(
    readonly where: string,
    readonly problems: WorkflowProblem[],
  ) {
    super(
      `${where}:${problems[0]!.line}: ${problems[0]!.message}${problems.length > 1 ? ` (and ${problems.length - 1} more: svc workflow check lists them)` : ''}`,
    );
  }
}

/**
 * The file's text at `ref` of `repo`, or null when that commit has none (or holds something else
 * there). One git process whether or not it is there: `--batch` answers `<spec> missing`, or a
 * header `<oid> <type> <size>` then the object and a newline.
 */
export async function workflowSourceAt(repo: string, ref: string): Promise<string | null> {
  const r = await run('git', ['cat-file', '--batch'], { cwd: repo, maxBuffer: 1 << 20, timeoutMs: 0, input: `${ref}:${WORKFLOW_FILE}\n` });
  // A git that cannot answer at all says, as before, that there is no file there.
  if (r.code !== 0) return null;
  const out = r.stdout;
  const eol = out.indexOf('\n');
  if (eol < 0 || out.slice(0, eol).split(' ')[1] !== 'blob') return null;
  return out.slice(eol + 1, out.endsWith('\n') ? -1 : undefined);
}

/** The working tree's copy of the file (at the repository's root), or null. */
export async function workflowSourceInTree(repo: string): Promise<{ path: string; source: string } | null> {
  const path = join((await repoPaths(repo)).top, WORKFLOW_FILE);
  try {
    return { path, source: readFileSync(path, 'utf8') };
  } catch {
    return null;
  }
}

export interface LoadedWorkflow {
  workflow: Workflow | null;
  /** One line when the working tree's file differs from the one the run uses (not committed). */
  hint: string | null;
}

/** The policy of the base commit `ref`; throws WorkflowFileError on a mistake. */
export async function loadWorkflow(repo: string, ref = 'HEAD', label = ref): Promise<LoadedWorkflow> {
  const [source, tree] = await Promise.all([workflowSourceAt(repo, ref), workflowSourceInTree(repo).catch(() => null)]);
  const hint =
    tree && tree.source !== source
      ? `${WORKFLOW_FILE} differs from the one in ${label}: the run uses ${label}'s${source === null ? ' (none)' : ''}; commit it to use yours`
      : null;
  if (source === null) return { workflow: null, hint };
  const { parseWorkflow } = await import('./parse.js');
  const { workflow, problems } = parseWorkflow(source);
  if (!workflow) throw new WorkflowFileError(`${WORKFLOW_FILE} (${label})`, problems);
  return { workflow, hint };
}
