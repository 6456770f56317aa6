// `svc workflow check`: the working tree's .svc/workflow.yml (or the one of --ref), checked against
// the schema the runs use. Each mistake is one `file:line: message` line on stdout (as a linter
// prints them) and the command exits 2; a good file is summed up in one line.
import { relative, resolve } from 'node:path';
import { loadEngine } from '../../dispatch/index.js';
import type { Context } from '../context.js';
import { EXIT, UsageError } from '../exit-codes.js';
import { NotFoundError, checkRepository } from '../dispatch/preflight.js';
import type { WorkflowCheckFlags } from './flags.js';

/** The flags of `svc workflow check`, as its table in register.ts declares them. */
export type WorkflowCheckOptions = WorkflowCheckFlags;

export async function runWorkflowCheck(opts: WorkflowCheckOptions, ctx: Context): Promise<void> {
  const { describeWorkflow, parseWorkflowSource, WORKFLOW_FILE, workflowSourceAt, workflowSourceInTree } = await loadEngine();
  const repo = resolve(ctx.cwd, opts.repo ?? ctx.env.SVC_REPO ?? '.');
  await checkRepository(repo, opts.repo ? '--repo' : ctx.env.SVC_REPO ? 'SVC_REPO' : 'the current directory', false);
  let source: string | null;
  let where: string;
  if (opts.ref !== undefined) {
    if (!opts.ref.trim() || opts.ref.startsWith('-')) throw new UsageError(`--ref '${opts.ref}' is not a commit`);
    source = await workflowSourceAt(repo, opts.ref);
    where = `${WORKFLOW_FILE} (${opts.ref})`;
    if (source === null) throw new NotFoundError(`${opts.ref} has no ${WORKFLOW_FILE} (or is no commit of ${repo})`);
  } else {
    const tree = await workflowSourceInTree(repo);
    if (!tree) throw new NotFoundError(`no ${WORKFLOW_FILE} in ${repo}: runs use none (docs/workflow.md shows one)`);
    source = tree.source;
    // Relative when it is below the current folder, as a linter names files; else as it is.
    const rel = relative(ctx.cwd, tree.path);
    where = rel.startsWith('..') ? tree.path : rel;
  }
  const { workflow, problems } = await parseWorkflowSource(source);
  if (ctx.out.json) {
    ctx.out.document({ file: where, ok: workflow !== null, problems, workflow });
  } else if (workflow) {
    ctx.out.info(`${where}: ok: ${describeWorkflow(workflow)}`);
  } else {
    for (const p of problems) ctx.out.data(`${where}:${p.line}: ${p.message}`);
  }
  if (!workflow) ctx.exitCode = EXIT.usage;
  else if (opts.ref === undefined && (await workflowSourceAt(repo, 'HEAD')) !== source) {
    ctx.out.warn(`${WORKFLOW_FILE} differs from HEAD's: runs use the committed one, so commit it`);
  }
}
