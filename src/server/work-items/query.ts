// A work item query over one project, built from SQL conditions plus the named sets readiness and
// the tree need. The sets are recursive CTEs computed once per query (never per row), so a filter
// like `ready:true leaf:true bugwork:false` stays one statement over 50,000 items.
import type { Database } from '../db.js';
import { DONE_SQL } from './status.js';
import { ROW_COLUMNS, type WorkItemRow } from './rows.js';

type SqlValue = string | number | null;

export class ItemQuery {
  private readonly ctes = new Map<string, { sql: string; params: SqlValue[] }>();
  private readonly conds: { sql: string; params: SqlValue[] }[] = [];
  private beneathCount = 0;

  constructor(readonly projectId: string) {
    this.conds.push({ sql: 'w.project_id = ?', params: [projectId] });
  }

  /** Adds an AND-ed condition on `w`. */
  where(sql: string, params: SqlValue[] = []): this {
    this.conds.push({ sql, params });
    return this;
  }

  /** Items of the project with at least one open (not done, not archived) blocker. */
  private openBlocked(): string {
    this.cte(
      'open_blocked',
      `SELECT DISTINCT l.to_id AS id FROM work_item_links l
         JOIN work_items b ON b.id = l.from_id JOIN work_items t ON t.id = l.to_id
        WHERE l.kind = 'blocks' AND t.project_id = ? AND b.status NOT IN ${DONE_SQL} AND b.archived_at IS NULL`,
      [this.projectId],
    );
    return 'open_blocked';
  }

  /** Items strictly beneath an item with an open blocker (the parent-ready cascade). */
  private cascadeBlocked(): string {
    const open = this.openBlocked();
    this.cte(
      'cascade_blocked',
      `SELECT c.id FROM work_items c WHERE c.parent_id IN (SELECT id FROM ${open})
       UNION SELECT c.id FROM work_items c JOIN cascade_blocked x ON c.parent_id = x.id`,
    );
    return 'cascade_blocked';
  }

  /** SQL truth of the readiness verdict; `soft` drops the ancestor requirement (allowSoftBlock). */
  readySql(soft = false): string {
    const parts = [`w.status NOT IN ${DONE_SQL}`, 'w.archived_at IS NULL', `w.id NOT IN (SELECT id FROM ${this.openBlocked()})`];
    if (!soft) parts.push(`w.id NOT IN (SELECT id FROM ${this.cascadeBlocked()})`);
    return `(${parts.join(' AND ')})`;
  }

  /** A leaf has no live (non-archived) children. */
  leafSql(): string {
    return 'NOT EXISTS (SELECT 1 FROM work_items c WHERE c.parent_id = w.id AND c.archived_at IS NULL)';
  }

  /** Bug work: a bug, or anything beneath one. */
  bugworkSql(): string {
    this.cte(
      'bug_tree',
      `SELECT id FROM work_items WHERE project_id = ? AND kind = 'bug'
       UNION SELECT c.id FROM work_items c JOIN bug_tree b ON c.parent_id = b.id`,
      [this.projectId],
    );
    return 'w.id IN (SELECT id FROM bug_tree)';
  }

  /** Items strictly beneath any of the given item ids, at any depth. */
  beneathSql(ids: readonly string[]): string {
    const name = `beneath_${this.beneathCount++}`;
    this.cte(
      name,
      `SELECT id FROM work_items WHERE parent_id IN (${ids.map(() => '?').join(',')})
       UNION SELECT c.id FROM work_items c JOIN ${name} u ON c.parent_id = u.id`,
      [...ids],
    );
    return `w.id IN (SELECT id FROM ${name})`;
  }

  private cte(name: string, sql: string, params: SqlValue[] = []): void {
    if (!this.ctes.has(name)) this.ctes.set(name, { sql, params });
  }

  /** The full statement: `SELECT <select> FROM work_items w WHERE … <tail>`. */
  build(select: string, tail = '', tailParams: SqlValue[] = []): { sql: string; params: SqlValue[] } {
    const params: SqlValue[] = [];
    let sql = '';
    if (this.ctes.size > 0) {
      sql += 'WITH RECURSIVE ';
      sql += [...this.ctes].map(([name, c]) => `${name}(id) AS MATERIALIZED (${c.sql})`).join(',\n');
      for (const c of this.ctes.values()) params.push(...c.params);
      sql += '\n';
    }
    sql += `SELECT ${select} FROM work_items w WHERE ${this.conds.map((c) => `(${c.sql})`).join(' AND ')} ${tail}`;
    for (const c of this.conds) params.push(...c.params);
    params.push(...tailParams);
    return { sql, params };
  }

  rows(db: Database, tail = '', tailParams: SqlValue[] = []): WorkItemRow[] {
    const q = this.build(ROW_COLUMNS, tail, tailParams);
    return db.prepare(q.sql).all(...q.params) as unknown as WorkItemRow[];
  }

  count(db: Database): number {
    const q = this.build('COUNT(*) AS n');
    return (db.prepare(q.sql).get(...q.params) as { n: number }).n;
  }
}
