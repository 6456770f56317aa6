// getWorkItem and the work item detail every write answers with: ancestors, children, the five
// link groups and the readiness verdict, from a handful of queries per item.
import type { LinkItem, Links, TargetRepository, WorkItemDetail } from '../../contract/types.js';
import { projectById, runMayReadItem } from '../core/access.js';
import type { Database } from '../db.js';
import { notFound, type Principal, type Route } from '../kernel.js';
import { dependenciesOf, ROW_COLUMNS, rowByKey, toChildItem, toLinkItem, toSummary, type WorkItemRow } from './rows.js';
import { isDone } from './status.js';

/** The item with `key` if the principal may see it; otherwise the same 404 as a missing one. */
export function itemForKey(db: Database, principal: Principal, key: string): WorkItemRow {
  const row = rowByKey(db, key);
  if (!row || !projectById(db, principal, row.project_id) || !runMayReadItem(db, principal, row.id)) {
    throw notFound(`work item ${key}`);
  }
  return row;
}

/** Strong ETag of an item's current version; any write bumps the version. */
export const etagOf = (row: WorkItemRow): string => `"${row.id}.${row.version}"`;

/** Whether an `If-Match` value still names the item's current version (`*` always does). */
export function ifMatchHolds(header: string, row: WorkItemRow): boolean {
  const current = etagOf(row);
  return header.split(',').some((raw) => {
    const tag = raw.trim().replace(/^W\//, '');
    return tag === '*' || tag === current;
  });
}

/** Ancestors, nearest first. */
export function ancestorsOf(db: Database, row: WorkItemRow): WorkItemRow[] {
  const out: WorkItemRow[] = [];
  const seen = new Set<string>([row.id]);
  let parentId = row.parent_id;
  while (parentId && !seen.has(parentId)) {
    seen.add(parentId);
    const p = db.prepare(`SELECT ${ROW_COLUMNS} FROM work_items w WHERE w.id = ?`).get(parentId) as WorkItemRow | undefined;
    if (!p) break;
    out.push(p);
    parentId = p.parent_id;
  }
  return out;
}

const linkRows = (db: Database, sql: string, id: string): WorkItemRow[] => db.prepare(sql).all(id) as unknown as WorkItemRow[];

function linksOf(db: Database, id: string): Links {
  const out = (kind: string) =>
    linkRows(
      db,
      `SELECT ${ROW_COLUMNS} FROM work_item_links l JOIN work_items w ON w.id = l.to_id WHERE l.from_id = ? AND l.kind = '${kind}' ORDER BY w.key`,
      id,
    );
  const inbound = (kind: string) =>
    linkRows(
      db,
      `SELECT ${ROW_COLUMNS} FROM work_item_links l JOIN work_items w ON w.id = l.from_id WHERE l.to_id = ? AND l.kind = '${kind}' ORDER BY w.key`,
      id,
    );
  // `relates` is symmetric: stored once, shown from both ends.
  const relates = [...out('relates'), ...inbound('relates')].filter((r, i, all) => all.findIndex((x) => x.id === r.id) === i);
  return {
    blockedBy: inbound('blocks').map(toLinkItem),
    blocks: out('blocks').map(toLinkItem),
    relatesTo: relates.map(toLinkItem),
    duplicates: out('duplicates').map(toLinkItem),
    clones: out('clones').map(toLinkItem),
  };
}

/** A blocker is open until it is done; an archived blocker no longer blocks. */
const isOpenBlocker = (l: LinkItem) => !isDone(l.status) && !l.archived;

function openBlockersOfId(db: Database, id: string): boolean {
  const open = linkRows(db, `SELECT ${ROW_COLUMNS} FROM work_item_links l JOIN work_items w ON w.id = l.from_id WHERE l.to_id = ? AND l.kind = 'blocks'`, id)
    .map(toLinkItem)
    .filter(isOpenBlocker);
  return open.length > 0;
}

function targetRepositoriesOf(row: WorkItemRow): TargetRepository[] {
  const refs = JSON.parse(row.target_repositories) as string[];
  const repos = JSON.parse(row.target_repos) as string[];
  // With no explicit list the item's target repositories are its targetRepos, then targetRepo.
  const list = refs.length ? refs : repos.length ? repos : row.target_repo ? [row.target_repo] : [];
  return list.map((ref, i) => ({
    ref,
    name: ref.split('/').filter(Boolean).pop() ?? ref,
    role: 'target',
    label: null,
    state: 'active',
    primary: i === 0,
  }));
}

export function buildDetail(db: Database, row: WorkItemRow): WorkItemDetail {
  const ancestors = ancestorsOf(db, row);
  const children = db
    .prepare(`SELECT ${ROW_COLUMNS} FROM work_items w WHERE w.parent_id = ? ORDER BY w.created_at, w.id`)
    .all(row.id) as unknown as WorkItemRow[];
  const deps = dependenciesOf(db, [row.id, ...children.map((c) => c.id)]);
  const links = linksOf(db, row.id);
  const openBlockers = links.blockedBy.filter(isOpenBlocker);
  const blockedAncestor = ancestors.find((a) => openBlockersOfId(db, a.id)) ?? null;
  const extra = JSON.parse(row.extra) as Record<string, string | null | undefined>;
  const str = (name: string) => (typeof extra[name] === 'string' ? (extra[name] as string) : null);
  return {
    ...toSummary(row, deps.get(row.id)),
    descriptionMd: row.description_md,
    parentKey: row.parent_key ?? null,
    ancestorKeys: ancestors.map((a) => a.key),
    children: children.map((c) => toChildItem(c, deps.get(c.id))),
    links,
    readiness: {
      ready: !isDone(row.status) && row.archived_at === null && openBlockers.length === 0 && blockedAncestor === null,
      openBlockers,
      blockedByAncestorKey: blockedAncestor?.key ?? null,
      blockedByAncestorTitle: blockedAncestor?.title ?? null,
    },
    labels: (JSON.parse(row.labels) as string[]).map((name) => ({ name })),
    components: (JSON.parse(row.components) as string[]).map((name) => ({ name })),
    commentCount: row.comment_count,
    sprintId: row.sprint_id,
    targetRepo: row.target_repo,
    targetRepos: JSON.parse(row.target_repos) as string[],
    targetRepositories: targetRepositoriesOf(row),
    executor: row.executor,
    planningSource: str('planningSource'),
    implementationSource: str('implementationSource'),
    planningHarness: str('planningHarness'),
    planningModel: str('planningModel'),
    implementationHarness: str('implementationHarness'),
    implementationModel: str('implementationModel'),
    archivedAt: row.archived_at,
    deliveries: JSON.parse(row.deliveries) as WorkItemDetail['deliveries'],
  };
}

export const getWorkItem: Route = {
  operationId: 'getWorkItem',
  handle({ db, principal, params }) {
    const row = itemForKey(db, principal, params.key!);
    return { status: 200, body: buildDetail(db, row), headers: { ETag: etagOf(row) } };
  },
};
