// Parameters of the ready lanes (listReadyBugs, listReadyContainers) and every 422 rule api-v1 lists for them.
import { KEY_PATTERN, KINDS, PRIORITIES } from '../../contract/types.js';
import type { ProjectRow } from '../core/access.js';
import type { Database } from '../db.js';
import { invalid } from '../kernel.js';

export interface LaneParams {
  kinds: string[];
  priorities: string[];
  /** null: any; 'none': unassigned; else a user id. */
  assignee: string | null;
  /** Item ids of the named ancestors (any of them). */
  ancestorIds: string[];
  sprintId: string | null;
  /** allowSoftBlock=true: ancestors need not be ready. */
  soft: boolean;
  /** A stable text of the parameters, scoping the lane's cursors. */
  canonical: string;
}

/** Repeatable parameters; empty values are ignored like absent ones. */
const many = (q: URLSearchParams, name: string) => q.getAll(name).filter((v) => v !== '');

export function readLaneParams(db: Database, project: ProjectRow, q: URLSearchParams, lane: 'bugs' | 'containers'): LaneParams {
  if (lane === 'containers') {
    for (const name of ['kind', 'ancestor', 'allowSoftBlock']) {
      if (q.has(name)) throw invalid(`${name} is not a parameter of ready/containers`);
    }
  }
  const kinds = many(q, 'kind');
  for (const k of kinds) if (!(KINDS as readonly string[]).includes(k)) throw invalid(`kind: unknown kind '${k}' (one of ${KINDS.join(', ')})`);
  const priorities = many(q, 'priority');
  for (const p of priorities) {
    if (!(PRIORITIES as readonly string[]).includes(p)) throw invalid(`priority: unknown priority '${p}' (one of ${PRIORITIES.join(', ')})`);
  }
  const assignee = q.get('assigneeId') || null;

  const ancestorIds = many(q, 'ancestor').map((key) => {
    if (!KEY_PATTERN.test(key)) throw invalid(`ancestor: '${key}' is not a work item key`);
    const row = db.prepare('SELECT id FROM work_items WHERE key = ? AND project_id = ?').get(key, project.id) as { id: string } | undefined;
    if (!row) throw invalid(`ancestor: no work item ${key} in project ${project.key}`);
    return row.id;
  });

  let sprintId = q.get('sprintId') || null;
  if (sprintId === 'active') {
    const active = db.prepare(`SELECT id FROM sprints WHERE project_id = ? AND state = 'active' ORDER BY rowid LIMIT 1`).get(project.id) as
      | { id: string }
      | undefined;
    if (!active) throw invalid(`sprintId: project ${project.key} has no active sprint`);
    sprintId = active.id;
  } else if (sprintId !== null) {
    if (!db.prepare('SELECT 1 FROM sprints WHERE id = ? AND project_id = ?').get(sprintId, project.id)) {
      throw invalid(`sprintId: ${sprintId} is not a sprint of project ${project.key}`);
    }
  }

  const softRaw = q.get('allowSoftBlock');
  if (softRaw !== null && !['', 'true', 'false'].includes(softRaw)) {
    throw invalid(`allowSoftBlock: must be true or false, got '${softRaw}'`);
  }
  const soft = softRaw === 'true';
  const canonical = JSON.stringify([lane, [...kinds].sort(), [...priorities].sort(), assignee, [...ancestorIds].sort(), sprintId, soft]);
  return { kinds, priorities, assignee, ancestorIds, sprintId, soft, canonical };
}
