// The filter's fields (docs/service.md): which operators each takes, its values' domain, and the SQL
// a clause of it compiles to. A value outside the domain is a 422 that names the field and the value.
import { KEY_PATTERN, KINDS, PRIORITIES, WORK_TYPES, EXECUTORS, STATUS_CATEGORIES } from '../../contract/types.js';
import type { Database } from '../db.js';
import { invalid } from '../kernel.js';
import type { Clause, FilterOp } from './filter.js';
import type { ItemQuery } from './query.js';
import { STATUSES, statusesIn } from './status.js';

/** What compiling needs beyond the clause: the project and the caller. */
export interface FilterScope {
  db: Database;
  projectId: string;
  /** The caller's user id, for `assignee:me`. */
  userId: string | null;
}

export type SqlValue = string | number | null;

const COMPARE: FilterOp[] = [':', '>', '<', '>=', '<='];

interface FieldSpec {
  ops: FilterOp[];
  compile: (q: ItemQuery, c: Clause, s: FilterScope, params: SqlValue[]) => string;
}

const oneOf = (field: string, allowed: readonly string[], values: string[]) => {
  for (const v of values) if (!allowed.includes(v)) throw invalid(`unknown value '${v}' for filter field '${field}' (one of ${allowed.join(', ')})`);
};
const marks = (n: number) => Array.from({ length: n }, () => '?').join(',');

/** `col IN (...)`, with `none` meaning NULL when the field is nullable. */
function enumField(column: string, domain: readonly string[] | null, nullable: boolean): FieldSpec {
  return {
    ops: [':'],
    compile(_q, c, _s, params) {
      const real = c.values.filter((v) => !(nullable && v === 'none'));
      if (domain) oneOf(c.field, domain, real);
      const parts: string[] = [];
      if (real.length) {
        parts.push(`${column} IN (${marks(real.length)})`);
        params.push(...real);
      }
      if (real.length !== c.values.length) parts.push(`${column} IS NULL`);
      return parts.join(' OR ');
    },
  };
}

function booleanField(sql: (q: ItemQuery) => string): FieldSpec {
  return {
    ops: [':'],
    compile(q, c) {
      const v = single(c);
      oneOf(c.field, ['true', 'false'], [v]);
      return v === 'true' ? sql(q) : `NOT ${sql(q)}`;
    },
  };
}

function single(c: Clause): string {
  if (c.values.length !== 1) throw invalid(`filter field '${c.field}' takes one value`);
  return c.values[0]!;
}

function numberField(column: string, integer: boolean): FieldSpec {
  return {
    ops: COMPARE,
    compile(_q, c, _s, params) {
      const parts = c.values.map((v) => {
        if (c.op === ':' && v === 'none') return `${column} IS NULL`;
        if (!/^-?\d+(\.\d+)?$/.test(v) || (integer && !/^-?\d+$/.test(v))) {
          throw invalid(`unknown value '${v}' for filter field '${c.field}' (expected ${integer ? 'an integer' : 'a number'} or none)`);
        }
        params.push(Number(v));
        return `${column} ${c.op === ':' ? '=' : c.op} ?`;
      });
      if (c.op !== ':' && c.values.length > 1) throw invalid(`filter field '${c.field}' takes one value with '${c.op}'`);
      return parts.join(' OR ');
    },
  };
}

/** Dates compare as ISO strings: stored timestamps are all `toISOString()` output. */
function dateField(column: string, nullable: boolean): FieldSpec {
  return {
    ops: nullable ? COMPARE : ['>', '<', '>=', '<='],
    compile(_q, c, _s, params) {
      const v = single(c);
      if (c.op === ':') {
        if (v !== 'none') throw invalid(`unknown value '${v}' for filter field '${c.field}' with ':' (only none; compare dates with > < >= <=)`);
        return `${column} IS NULL`;
      }
      const ms = /^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:\d{2}))?$/.test(v) ? Date.parse(v) : NaN;
      if (Number.isNaN(ms)) throw invalid(`unknown value '${v}' for filter field '${c.field}' (expected a date like 2025-01-31 or a UTC date-time)`);
      params.push(new Date(ms).toISOString());
      return `${column} ${c.op} ?`;
    },
  };
}

/** Each key must be a work item of this project. */
function itemIds(c: Clause, s: FilterScope): string[] {
  return c.values.map((v) => {
    if (!KEY_PATTERN.test(v)) throw invalid(`unknown value '${v}' for filter field '${c.field}' (expected a work item key or none)`);
    const row = s.db.prepare('SELECT id FROM work_items WHERE key = ? AND project_id = ?').get(v, s.projectId) as { id: string } | undefined;
    if (!row) throw invalid(`unknown value '${v}' for filter field '${c.field}': no such work item in this project`);
    return row.id;
  });
}

/** Labels and components: case-insensitive membership in the item's JSON list; `none` = empty list. */
function listField(column: string): FieldSpec {
  return {
    ops: [':'],
    compile(_q, c, _s, params) {
      const real = c.values.filter((v) => v !== 'none');
      const parts: string[] = [];
      if (real.length) {
        parts.push(`EXISTS (SELECT 1 FROM json_each(${column}) j WHERE lower(j.value) IN (${marks(real.length)}))`);
        params.push(...real.map((v) => v.toLowerCase()));
      }
      if (real.length !== c.values.length) parts.push(`json_array_length(${column}) = 0`);
      return parts.join(' OR ');
    },
  };
}

export const FIELDS: Record<string, FieldSpec> = {
  key: {
    ops: [':'],
    compile(_q, c, _s, params) {
      for (const v of c.values) if (!KEY_PATTERN.test(v)) throw invalid(`unknown value '${v}' for filter field 'key' (expected a work item key)`);
      params.push(...c.values);
      return `w.key IN (${marks(c.values.length)})`;
    },
  },
  kind: enumField('w.kind', KINDS, false),
  type: enumField('w.type', WORK_TYPES, true),
  status: enumField('w.status', STATUSES, false),
  statusCategory: {
    ops: [':'],
    compile(_q, c, _s, params) {
      oneOf('statusCategory', STATUS_CATEGORIES, c.values);
      const statuses = c.values.flatMap(statusesIn);
      params.push(...statuses);
      return statuses.length ? `w.status IN (${marks(statuses.length)})` : '0';
    },
  },
  priority: enumField('w.priority', PRIORITIES, false),
  executor: enumField('w.executor', EXECUTORS, true),
  assignee: {
    ops: [':'],
    compile(_q, c, s, params) {
      const ids = c.values.map((v) => (v === 'me' ? (s.userId ?? '') : v));
      return enumField('w.assignee_id', null, true).compile(_q, { ...c, values: ids }, s, params);
    },
  },
  sprint: {
    ops: [':'],
    compile(_q, c, s, params) {
      const ids = c.values.map((v) => {
        if (v !== 'active') return v;
        const row = s.db.prepare(`SELECT id FROM sprints WHERE project_id = ? AND state = 'active'`).get(s.projectId) as { id: string } | undefined;
        return row?.id ?? '\u0000no active sprint';
      });
      return enumField('w.sprint_id', null, true).compile(_q, { ...c, values: ids }, s, params);
    },
  },
  parent: {
    ops: [':'],
    compile(_q, c, s, params) {
      const keys = c.values.filter((v) => v !== 'none');
      const ids = itemIds({ ...c, values: keys }, s);
      const parts: string[] = [];
      if (ids.length) {
        parts.push(`w.parent_id IN (${marks(ids.length)})`);
        params.push(...ids);
      }
      if (keys.length !== c.values.length) parts.push('w.parent_id IS NULL');
      return parts.join(' OR ');
    },
  },
  ancestor: { ops: [':'], compile: (q, c, s) => q.beneathSql(itemIds(c, s)) },
  label: listField('w.labels'),
  component: listField('w.components'),
  title: {
    ops: [':', '~'],
    compile(_q, c, _s, params) {
      // `~` is a case-insensitive substring, `:` a case-insensitive whole title; LIKE wildcards escaped.
      const like = (v: string) => (c.op === '~' ? `%${v.replace(/[\\%_]/g, (x) => `\\${x}`)}%` : v.replace(/[\\%_]/g, (x) => `\\${x}`));
      params.push(...c.values.map(like));
      return c.values.map(() => `w.title LIKE ? ESCAPE '\\'`).join(' OR ');
    },
  },
  createdAt: dateField('w.created_at', false),
  updatedAt: dateField('w.updated_at', false),
  dueDate: dateField('w.due_date', true),
  storyPoints: numberField('w.story_points', false),
  estimateMinutes: numberField('w.estimate_minutes', true),
  archived: {
    ops: [':'],
    compile(_q, c) {
      const v = single(c);
      oneOf('archived', ['true', 'false', 'any'], [v]);
      return v === 'any' ? '1' : v === 'true' ? 'w.archived_at IS NOT NULL' : 'w.archived_at IS NULL';
    },
  },
  ready: booleanField((q) => q.readySql()),
  leaf: booleanField((q) => q.leafSql()),
  bugwork: booleanField((q) => q.bugworkSql()),
};
