// The filter grammar of listWorkItems, countWorkItems, listBacklog (documented in docs/service.md).
//
//   filter  := clause (whitespace clause)*          clauses are AND-ed
//   clause  := ['-'] field op values                '-' negates the clause
//   op      := ':' | '>' | '<' | '>=' | '<=' | '~'
//   values  := value (',' value)*                   ':' with several values means "any of"
//   value   := bare characters | "double quoted" (\" and \\ escape inside quotes)
//
// An unknown field, an operator the field does not take, or a value outside the field's domain is
// a 422 whose message names which. `archived` defaults to false unless a clause names it.
import { invalid } from '../kernel.js';
import { FIELDS, type FilterScope, type SqlValue } from './filter-fields.js';
import { ItemQuery } from './query.js';

export type FilterOp = ':' | '>' | '<' | '>=' | '<=' | '~';

export interface Clause {
  negate: boolean;
  field: string;
  op: FilterOp;
  values: string[];
}

/** Splits a filter into clauses; throws a 422 on a syntax error. */
export function parseFilter(text: string): Clause[] {
  const clauses: Clause[] = [];
  for (const token of tokens(text)) {
    const m = /^(-?)([A-Za-z]+)(>=|<=|:|>|<|~)([\s\S]*)$/.exec(token);
    if (!m) {
      const field = /^-?([A-Za-z]+)/.exec(token)?.[1];
      if (field && !(field in FIELDS)) throw invalid(`unknown filter field '${field}'`);
      throw invalid(`filter clause '${token}' has no operator (use field:value, field>value, title~text)`);
    }
    const [, neg, field, op, rawValues] = m as unknown as [string, string, string, FilterOp, string];
    const values = splitValues(rawValues!, token);
    clauses.push({ negate: neg === '-', field: field!, op, values });
  }
  if (clauses.length === 0) throw invalid('filter is empty');
  return clauses;
}

/** Whitespace-separated tokens; whitespace inside double quotes belongs to the token. */
function tokens(text: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted && ch === '\\' && i + 1 < text.length) {
      cur += ch + text[++i];
      continue;
    }
    if (ch === '"') quoted = !quoted;
    if (!quoted && /\s/.test(ch)) {
      if (cur) out.push(cur);
      cur = '';
    } else cur += ch;
  }
  if (quoted) throw invalid('filter has an unterminated quote');
  if (cur) out.push(cur);
  return out;
}

/** Comma-separated values; quotes protect commas and are removed. */
function splitValues(raw: string, token: string): string[] {
  const values: string[] = [];
  let cur = '';
  let quoted = false;
  let sawQuote = false;
  for (let i = 0; i < raw.length; i++) {
    const ch = raw[i]!;
    if (quoted && ch === '\\' && i + 1 < raw.length) cur += raw[++i];
    else if (ch === '"') {
      quoted = !quoted;
      sawQuote = true;
    } else if (ch === ',' && !quoted) {
      values.push(cur);
      cur = '';
    } else cur += ch;
  }
  values.push(cur);
  if (values.some((v) => v === '') && !sawQuote) throw invalid(`filter clause '${token}' has an empty value`);
  return values;
}

/** Applies a filter (or none) to a query over the project. */
export function applyFilter(q: ItemQuery, filter: string | null, scope: FilterScope): ItemQuery {
  const clauses = filter === null ? [] : parseFilter(filter);
  let namesArchived = false;
  for (const c of clauses) {
    const spec = FIELDS[c.field];
    if (!spec) throw invalid(`unknown filter field '${c.field}' (known: ${Object.keys(FIELDS).join(', ')})`);
    if (!spec.ops.includes(c.op)) {
      throw invalid(`operator '${c.op}' is not supported by filter field '${c.field}' (use ${spec.ops.join(' ')})`);
    }
    if (c.field === 'archived') namesArchived = true;
    const params: SqlValue[] = [];
    const sql = spec.compile(q, c, scope, params);
    // NULL-safe negation: `-assignee:u1` keeps unassigned items.
    q.where(c.negate ? `COALESCE((${sql}), 0) = 0` : sql, params);
  }
  if (!namesArchived) q.where('w.archived_at IS NULL');
  return q;
}

/** A query over the project's items with the filter applied. */
export function filteredItems(filter: string | null, scope: FilterScope): ItemQuery {
  return applyFilter(new ItemQuery(scope.projectId), filter, scope);
}
