// Which project a dispatch command works in (README.md#configuration): a work item key `<PROJECT>-<n>` names its
// project, so the keyed commands take it from their keys and the default project (--project,
// SVC_PROJECT, stored) is needed only where no key is given. Decided before anything is sent, so
// `--dry-run` and the real run refuse the same calls.
import { KEY_PATTERN, type DispatchCommand, type DispatchRun } from '../../contract/types.js';
import type { Context } from '../context.js';
import { UsageError } from '../exit-codes.js';
import { requireProject, resolveProject } from '../settings.js';

/** The commands whose arguments are work item keys. */
export const KEYED_COMMANDS: readonly DispatchCommand[] = ['run', 'run_scope', 'fix', 'review'];

/** The project key of a work item key (`PROJ-12` → `PROJ`), or null when it is not a key. */
export function projectOfKey(key: string): string | null {
  return KEY_PATTERN.test(key) ? key.slice(0, key.lastIndexOf('-')) : null;
}

/**
 * The one project of `keys`. A key that is not a key, keys of two projects, or a `--project` flag
 * that names another project: a usage error. SVC_PROJECT and the stored project are defaults for
 * commands without keys; they never override or contradict a key (a CI job's SVC_PROJECT must not
 * break `svc run OTHER-3`).
 */
export function projectOfKeys(keys: readonly string[], flag: string | undefined): string {
  const projects: string[] = [];
  for (const key of keys) {
    const project = projectOfKey(key);
    if (!project) throw new UsageError(`not a work item key: ${key} (keys look like PROJ-12)`);
    if (!projects.includes(project)) projects.push(project);
  }
  if (projects.length === 0) throw new UsageError('name at least one KEY');
  if (projects.length > 1) {
    throw new UsageError(`the keys name ${projects.length} projects (${projects.join(', ')}): one call runs the cards of one project`);
  }
  const project = projects[0]!;
  if (flag !== undefined && flag !== project) {
    throw new UsageError(`--project ${flag} disagrees with the keys, which are of project ${project}: drop --project`);
  }
  return project;
}

/** `continue RUN`: the project of the run's cards (a run holds the cards of one project). */
export function projectOfRun(run: DispatchRun, flag: string | undefined, ctx: Context): string {
  const keys = run.cards.map((c) => c.workItemKey).filter((k) => projectOfKey(k) !== null);
  if (keys.length === 0) {
    // A run with no cards has nothing to continue; the default project only names the empty open.
    const project = flag ?? resolveProject(ctx, undefined);
    if (!project) throw new UsageError(`run ${run.id} has no cards: nothing to continue`);
    return project;
  }
  const project = projectOfKey(keys[0]!)!;
  if (flag !== undefined && flag !== project) {
    throw new UsageError(`--project ${flag} disagrees with run ${run.id}, which is of project ${project}: continue takes everything from the run`);
  }
  return project;
}

/**
 * The project of a command that is not `continue` (whose project comes from its run, read later):
 * from the keys for keyed commands, else the default project.
 */
export function dispatchProject(command: DispatchCommand, keys: readonly string[], flag: string | undefined, ctx: Context): string {
  if (KEYED_COMMANDS.includes(command)) return projectOfKeys(keys, flag);
  return requireProject(ctx, flag);
}
