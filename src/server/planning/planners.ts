// The planning dependency, pluggable: an agent command (given the thread as JSON on stdin, it
// answers JSON proposals on stdout) or the built-in deterministic planner for demos. Which one is
// configured is settings.ts's business; this file only asks and checks the answer.
import { spawn } from 'node:child_process';
import { KINDS, PRIORITIES, PROPOSAL_OPS, WORK_TYPES, type Kind } from '../../contract/types.js';
import { LEGAL_PARENTS } from '../work-items/tree.js';
import { isKey } from './store.js';

/** What a planner is given: the thread's turns in order, plus where they point. */
export interface PlannerInput {
  project: { key: string; name: string };
  /** The thread's anchor set; empty for the project-wide thread. */
  targetKeys: string[];
  targets: { key: string; kind: string; title: string }[];
  turns: { seq: number; body: string; createdAt: string }[];
}

/** A proposal as a planner answers it, after validation. */
export interface ProposalDraft {
  ref: string;
  op: 'add' | 'modify' | 'remove';
  proposedFields: Record<string, unknown> | null;
  patch: Record<string, unknown> | null;
  parentRef: string | null;
  blockedByRefs: string[];
  workItemKey: string | null;
  rationale: string | null;
}

export interface PlannerAnswer {
  title: string | null;
  summary: string | null;
  proposals: ProposalDraft[];
}

/** Why a job failed; `reachable: false` when the dependency could not be asked at all. */
export class PlannerFailure extends Error {
  constructor(
    message: string,
    readonly reachable: boolean,
  ) {
    super(message);
  }
}

export const MAX_PROPOSALS = 200;
const MAX_OUTPUT_BYTES = 1024 * 1024;
/** Fields a proposal may set on a work item (a subset of the create body). */
const FIELD_CHECKS: Record<string, (v: unknown) => boolean> = {
  kind: (v) => typeof v === 'string' && (KINDS as readonly string[]).includes(v),
  title: (v) => typeof v === 'string' && v.trim().length > 0,
  descriptionMd: (v) => v === null || typeof v === 'string',
  priority: (v) => typeof v === 'string' && (PRIORITIES as readonly string[]).includes(v),
  type: (v) => v === null || (typeof v === 'string' && (WORK_TYPES as readonly string[]).includes(v)),
  estimateMinutes: (v) => v === null || (Number.isSafeInteger(v) && (v as number) >= 0),
  storyPoints: (v) => v === null || (typeof v === 'number' && v >= 0 && v <= 9999.99),
};

function checkFields(what: string, value: unknown, requireTitle: boolean): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`${what} must be an object`);
  const fields = value as Record<string, unknown>;
  for (const [name, v] of Object.entries(fields)) {
    const check = FIELD_CHECKS[name];
    if (!check) throw new Error(`${what}.${name} is not a field a plan may set`);
    if (!check(v)) throw new Error(`${what}.${name} has an invalid value`);
  }
  if (requireTitle && fields.title === undefined) throw new Error(`${what}.title is required`);
  if (!requireTitle && Object.keys(fields).length === 0) throw new Error(`${what} changes nothing`);
  return fields;
}

/** Validates a planner's stdout: `{title?, summary?, proposals: [...]}` or a bare array. */
export function parseAnswer(text: string): PlannerAnswer {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new Error('the planner did not answer JSON');
  }
  const envelope = (Array.isArray(raw) ? { proposals: raw } : raw) as Record<string, unknown> | null;
  if (typeof envelope !== 'object' || envelope === null || !Array.isArray(envelope.proposals)) {
    throw new Error('the planner answer has no proposals array');
  }
  const optText = (v: unknown, name: string): string | null => {
    if (v === undefined || v === null) return null;
    if (typeof v !== 'string') throw new Error(`${name} must be a string`);
    return v;
  };
  if (envelope.proposals.length > MAX_PROPOSALS) throw new Error(`more than ${MAX_PROPOSALS} proposals`);
  const drafts = envelope.proposals.map((p, i) => draftOf(p, i));
  const refs = new Set<string>();
  for (const d of drafts) {
    if (refs.has(d.ref)) throw new Error(`proposal ref ${d.ref} is used twice`);
    refs.add(d.ref);
  }
  // A reference names another proposal of the plan or an existing work item by key.
  for (const d of drafts) {
    for (const r of [d.parentRef, ...d.blockedByRefs]) {
      if (r === null || (r !== d.ref && (refs.has(r) || isKey(r)))) continue;
      throw new Error(`proposal ${d.ref} refers to ${JSON.stringify(r)}, neither a proposal ref nor a work item key`);
    }
  }
  return { title: optText(envelope.title, 'title'), summary: optText(envelope.summary, 'summary'), proposals: drafts };
}

function draftOf(value: unknown, index: number): ProposalDraft {
  const what = `proposals[${index}]`;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`${what} must be an object`);
  const p = value as Record<string, unknown>;
  const op = p.op;
  if (typeof op !== 'string' || !(PROPOSAL_OPS as readonly string[]).includes(op)) throw new Error(`${what}.op must be add, modify or remove`);
  const ref = p.ref === undefined ? `P${index + 1}` : p.ref;
  if (typeof ref !== 'string' || ref.length === 0 || ref.length > 64) throw new Error(`${what}.ref must be a short string`);
  const parentRef = p.parentRef ?? null;
  if (parentRef !== null && typeof parentRef !== 'string') throw new Error(`${what}.parentRef must be a string or null`);
  const blockedByRefs = p.blockedByRefs ?? [];
  if (!Array.isArray(blockedByRefs) || blockedByRefs.some((r) => typeof r !== 'string')) {
    throw new Error(`${what}.blockedByRefs must be an array of strings`);
  }
  const rationale = p.rationale ?? null;
  if (rationale !== null && typeof rationale !== 'string') throw new Error(`${what}.rationale must be a string`);
  const key = p.workItemKey ?? null;
  const draft: ProposalDraft = {
    ref,
    op: op as ProposalDraft['op'],
    proposedFields: null,
    patch: null,
    parentRef,
    blockedByRefs: [...new Set(blockedByRefs as string[])],
    workItemKey: null,
    rationale,
  };
  if (op === 'add') {
    // An add has no work item until the plan is approved.
    if (key !== null) throw new Error(`${what}: an add proposal carries no workItemKey`);
    draft.proposedFields = checkFields(`${what}.proposedFields`, p.proposedFields, true);
  } else {
    if (typeof key !== 'string' || !isKey(key)) throw new Error(`${what}.workItemKey must be a work item key`);
    draft.workItemKey = key;
    if (op === 'modify') draft.patch = checkFields(`${what}.patch`, p.patch, false);
  }
  return draft;
}

/** Built-in planner: each line (or sentence) of the turns becomes one `add`, chained in order. */
export function builtinPlanner(input: PlannerInput): PlannerAnswer {
  const lines = input.turns.flatMap((t) =>
    t.body
      .split(/\r?\n/)
      .map((l) => l.replace(/^\s*(?:[-*•]|\d+[.)])\s*/, '').trim())
      .filter((l) => l.length > 0),
  );
  const pieces =
    lines.length === 1
      ? lines[0]!
          .split(/(?<=[.;!?])\s+/)
          .map((s) => s.trim())
          .filter(Boolean)
      : lines;
  const seen = new Set<string>();
  const titles = pieces.filter((p) => {
    const k = p.toLowerCase();
    return seen.has(k) ? false : (seen.add(k), true);
  });
  const only = input.targets.length === 1 ? input.targets[0]! : null;
  // With one anchor the steps go beneath it, as tasks where a task may sit (an epic), else as
  // subtasks where those may (a story, task or bug); otherwise they stand alone as tasks.
  const under = (kind: Kind) => only !== null && LEGAL_PARENTS[kind].includes(only.kind as Kind);
  const kind: Kind = under('task') ? 'task' : under('subtask') ? 'subtask' : 'task';
  const parentRef = under(kind) ? only!.key : null;
  const proposals = titles.slice(0, 5).map(
    (title, i): ProposalDraft => ({
      ref: `P${i + 1}`,
      op: 'add',
      proposedFields: { kind, title: title.length > 200 ? `${title.slice(0, 199)}…` : title, priority: 'medium' },
      patch: null,
      parentRef,
      blockedByRefs: i === 0 ? [] : [`P${i}`],
      workItemKey: null,
      rationale: 'built-in planner: one step per line of the conversation',
    }),
  );
  const scope = only ? only.key : input.project.key;
  return {
    title: `Plan for ${scope}`,
    summary: `${proposals.length} step(s) from ${input.turns.length} turn(s)`,
    proposals,
  };
}

/**
 * Runs the agent command through the shell, the input as JSON on stdin. A command that cannot be
 * started (spawn error, or the shell's 126/127 "cannot execute"/"not found") was never asked:
 * `reachable: false`. A non-zero exit, a timeout or a malformed answer fails the job as reachable.
 */
export function runPlannerCommand(command: string, input: PlannerInput, timeoutMs: number, track: (kill: () => void) => () => void): Promise<PlannerAnswer> {
  return new Promise((resolve, reject) => {
    // Its own process group, so a timeout or a shutdown ends the shell and everything it started.
    const child = spawn(command, { shell: true, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    const killAll = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL'); // the group is already gone, or the platform has none
      }
    };
    const untrack = track(killAll);
    const out: Buffer[] = [];
    let outBytes = 0;
    let err = '';
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      untrack();
      fn();
    };
    const timer = setTimeout(() => {
      killAll();
      finish(() => reject(new PlannerFailure(`the planner command did not answer within ${timeoutMs} ms`, true)));
    }, timeoutMs);
    child.on('error', (e) => finish(() => reject(new PlannerFailure(`the planner command could not start: ${e.message}`, false))));
    child.stdout.on('data', (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes <= MAX_OUTPUT_BYTES) out.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (err.length < 2000) err += chunk.toString('utf8');
    });
    // A command that exits without reading stdin closes the pipe; that is its business.
    child.stdin.on('error', () => {});
    child.stdin.end(JSON.stringify(input));
    child.on('close', (code, signal) => {
      finish(() => {
        if (code === 126 || code === 127) {
          reject(new PlannerFailure(`the planner command could not be run (exit ${code}): ${err.trim().slice(0, 300)}`, false));
        } else if (code !== 0) {
          reject(new PlannerFailure(`the planner command failed (${signal ?? `exit ${code}`}): ${err.trim().slice(0, 300)}`, true));
        } else if (outBytes > MAX_OUTPUT_BYTES) {
          reject(new PlannerFailure(`the planner answer exceeds ${MAX_OUTPUT_BYTES} bytes`, true));
        } else {
          try {
            resolve(parseAnswer(Buffer.concat(out).toString('utf8')));
          } catch (e) {
            reject(new PlannerFailure(`malformed planner answer: ${(e as Error).message}`, true));
          }
        }
      });
    });
  });
}
