// The create and update bodies of operations 6 and 9, checked here even when the contract
// document's validator already ran: the service must stay faithful on its own. Every rule of
// api-v1 §2 "Create body" and "Update body", with a one-line message naming the field.
import { EXECUTORS, KEY_PATTERN, KINDS, PRIORITIES, WORK_TYPES, type Kind } from '../../contract/types.js';
import { invalid } from '../kernel.js';

/** A checked body: only the fields present, nulls kept (null clears on update). */
export interface WorkItemFields {
  kind?: Kind;
  title?: string;
  parentKey?: string | null;
  descriptionMd?: string | null;
  priority?: string;
  type?: string | null;
  executor?: string | null;
  storyPoints?: number | null;
  estimateMinutes?: number | null;
  targetRepo?: string | null;
  targetRepos?: string[];
  targetRepositories?: string[];
  assigneeId?: string | null;
  dueDate?: string | null;
  explanationMd?: string | null;
}

const UTC_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?Z$/;

type Check = (v: unknown, field: string) => unknown;

const nullable = (check: Check): Check => (v, f) => (v === null ? null : check(v, f));
const str: Check = (v, f) => {
  if (typeof v !== 'string') throw invalid(`${f}: must be a string`);
  return v;
};
const oneOf = (values: readonly string[]): Check => (v, f) => {
  if (typeof v !== 'string' || !values.includes(v)) throw invalid(`${f}: must be one of ${values.join(', ')}`);
  return v;
};
const strings: Check = (v, f) => {
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw invalid(`${f}: must be an array of strings`);
  return v;
};

const CHECKS: Record<keyof WorkItemFields, Check> = {
  kind: oneOf(KINDS),
  title: (v, f) => {
    if (typeof v !== 'string' || v.length < 1) throw invalid(`${f}: must be a string of at least 1 character`);
    return v;
  },
  parentKey: nullable((v, f) => {
    if (typeof v !== 'string' || !KEY_PATTERN.test(v)) throw invalid(`${f}: must be a work item key like ABC-12`);
    return v;
  }),
  descriptionMd: nullable(str),
  priority: oneOf(PRIORITIES),
  type: nullable(oneOf(WORK_TYPES)),
  executor: nullable(oneOf(EXECUTORS)),
  storyPoints: nullable((v, f) => {
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > 9999.99) throw invalid(`${f}: must be a number from 0 to 9999.99`);
    return v;
  }),
  estimateMinutes: nullable((v, f) => {
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw invalid(`${f}: must be an integer from 0 to 9007199254740991`);
    return v;
  }),
  targetRepo: nullable(str),
  targetRepos: strings,
  targetRepositories: strings,
  assigneeId: nullable(str),
  dueDate: nullable((v, f) => {
    if (typeof v !== 'string' || !UTC_DATE_TIME.test(v) || Number.isNaN(Date.parse(v))) {
      throw invalid(`${f}: must be a UTC date-time ending in Z`);
    }
    // Stored normalised so date filters compare as text.
    return new Date(Date.parse(v)).toISOString();
  }),
  explanationMd: nullable(str),
};

/** Checks a create (`kind`, `title` required) or update body; unknown properties are a 422. */
export function checkBody(body: unknown, mode: 'create' | 'update'): WorkItemFields {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('body: must be a JSON object');
  const out: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(body)) {
    const check = CHECKS[field as keyof WorkItemFields];
    if (!check || (mode === 'create' && field === 'explanationMd')) throw invalid(`${field}: unknown property`);
    out[field] = check(value, field);
  }
  if (mode === 'create') {
    if (out.kind === undefined) throw invalid('kind: required');
    if (out.title === undefined) throw invalid('title: required');
  }
  return out as WorkItemFields;
}
