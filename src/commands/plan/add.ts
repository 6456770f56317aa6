// `svc plan "text"`: addPlanTurn. Persists one turn on the thread of the anchor set; submits nothing.
import type { PlanSessionAddress, PlanningThread } from '../../contract/types.js';
import { KEY_PATTERN } from '../../contract/types.js';
import { connect } from '../connect.js';
import type { Context } from '../context.js';
import { UsageError } from '../exit-codes.js';
import { requireProject } from '../settings.js';
import type { PlanAddFlags } from './flags.js';

/** The flags of `svc plan add` (and the text), as its table in register.ts declares them. */
export type PlanAddOptions = PlanAddFlags & { text: string };

export async function runPlanAdd(opts: PlanAddOptions, ctx: Context): Promise<void> {
  const project = requireProject(ctx, opts.project);
  const address = threadAddress(opts.target);
  const body = opts.text === '-' ? await readAll(ctx.stdin) : opts.text;
  if (body.trim() === '') throw new UsageError('the turn is empty: give the text to add, or - to read it from stdin');
  const thread = await connect(ctx).addPlanTurn(project, { ...address, body });
  if (ctx.out.json) return ctx.out.document(thread);
  ctx.out.info(`Added a turn to ${threadName(project, thread)}: ${thread.turnCount} turn${thread.turnCount === 1 ? '' : 's'}`);
  ctx.out.info(`Send them to the planner with \`svc plan submit${thread.targetKeys.length ? ` --target ${thread.targetKeys.join(',')}` : ''}\``);
}

/** The body fields naming a thread: its anchor set, checked for key shape; none is the project-wide thread. */
export function threadAddress(targets: string[] | undefined): PlanSessionAddress {
  if (!targets || targets.length === 0) return {};
  const bad = targets.filter((k) => !KEY_PATTERN.test(k));
  if (bad.length > 0) throw new UsageError(`--target takes work item keys (like PROJ-12), got: ${bad.join(', ')}`);
  return { targetKeys: targets };
}

export const threadName = (project: string, thread: Pick<PlanningThread, 'targetKeys'>): string =>
  thread.targetKeys.length ? `the thread on ${thread.targetKeys.join(', ')}` : `the project-wide thread of ${project}`;

async function readAll(stream: AsyncIterable<unknown>): Promise<string> {
  let text = '';
  for await (const chunk of stream) text += typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8');
  return text;
}
