// Parsing `.svc/workflow.yml` (docs/workflow.md): with `yaml` for its positions, then checked against
// FIELDS (the schema), so every mistake is one line naming the line of the file it is on. Loaded
// only when there is a file to parse (load.ts), not with every dispatch command.
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node } from 'yaml';
import { parseDuration } from '../duration.js';
import { MAX_ATTEMPTS } from '../limits.js';
import { agentEnvNameProblem } from '../agent/env.js';
import { AllowEntryError, parseAllowEntry } from '../fence/allowlist.js';
import { DEFAULT_STEP_TIMEOUTS, EMPTY_WORKFLOW, type StepName, type Workflow, type WorkflowProblem } from './policy.js';

type Check = (node: Node, say: (message: string, at?: Node) => void) => unknown;

const text =
  (what: string, kind: string): Check =>
  (node, say) => {
    if (isScalar(node) && typeof node.value === 'string' && node.value.trim()) return node.value;
    say(`${what} must be a string (${kind}), not ${isScalar(node) ? JSON.stringify(node.value) : 'a list or map'}`);
    return undefined;
  };

/** One string, or a list of them. */
const texts =
  (what: string): Check =>
  (node, say) => {
    if (isScalar(node) && typeof node.value === 'string' && node.value.trim()) return [node.value];
    if (!isSeq(node)) {
      say(`${what} must be a string or a list of strings, not ${isScalar(node) ? JSON.stringify(node.value) : 'a map'}`);
      return undefined;
    }
    const out: string[] = [];
    for (const item of node.items) {
      if (isScalar(item) && typeof item.value === 'string' && item.value.trim()) out.push(item.value);
      else say(`each entry of ${what} must be a non-empty string`, item as Node);
    }
    return out;
  };

const whole =
  (what: string, min: number, max: number): Check =>
  (node, say) => {
    if (isScalar(node) && typeof node.value === 'number' && Number.isInteger(node.value) && node.value >= min && node.value <= max) return node.value;
    say(`${what} must be a whole number from ${min} to ${max}, not ${isScalar(node) ? JSON.stringify(node.value) : 'a list or map'}`);
    return undefined;
  };

/** Globs of files inside the checkout: relative, without `..`. */
const globs =
  (what: string): Check =>
  (node, say) => {
    const list = texts(what)(node, say) as string[] | undefined;
    return list?.filter((g) => {
      const bad = g.startsWith('/') ? 'is absolute' : g.split('/').includes('..') ? 'leaves the checkout (..)' : null;
      if (bad) say(`${what}: '${g}' ${bad}; globs are relative to the repository's root`);
      return !bad;
    });
  };

/** Variable names for `env:`, one or a list: never one of svc's own. */
const names: Check = (node, say) => {
  if (isMap(node)) {
    say('env must be a variable name or a list of them, not a map');
    return undefined;
  }
  const out: string[] = [];
  for (const item of isSeq(node) ? node.items : [node]) {
    const name = isScalar(item) && typeof item.value === 'string' ? item.value : null;
    const problem = name === null ? 'each entry must be a variable name' : agentEnvNameProblem(name);
    if (problem) say(`env: ${problem}`, item as Node);
    else out.push(name!);
  }
  return out;
};

const timeouts: Check = (node, say) => {
  if (!isMap(node)) {
    say(`timeouts must be a map of ${Object.keys(DEFAULT_STEP_TIMEOUTS).join(', ')} to durations (like 10m)`);
    return undefined;
  }
  const out: Partial<Record<StepName, number>> = {};
  for (const pair of node.items) {
    const name = isScalar(pair.key) ? String(pair.key.value) : '';
    const value = pair.value as Node | null;
    if (!(name in DEFAULT_STEP_TIMEOUTS)) {
      say(`unknown key timeouts.${name} (one of ${Object.keys(DEFAULT_STEP_TIMEOUTS).join(', ')})`, pair.key as Node);
      continue;
    }
    const raw = value && isScalar(value) ? String(value.value) : '';
    try {
      const ms = parseDuration(raw, `timeouts.${name}`);
      if (ms <= 0) throw new Error();
      out[name as StepName] = ms;
    } catch {
      say(`timeouts.${name} must be a duration like 90s, 10m or 1h, not ${JSON.stringify(raw)}`, value ?? (pair.key as Node));
    }
  }
  return out;
};

/** `network: {allow: [HOST[:PORT], ...]}`: each entry checked as --allow-host checks it. */
const network: Check = (node, say) => {
  const allow = isMap(node) ? node.items.find((p) => isScalar(p.key) && p.key.value === 'allow') : undefined;
  const other = isMap(node) ? node.items.find((p) => !(isScalar(p.key) && p.key.value === 'allow')) : undefined;
  if (!isMap(node) || !allow || other) {
    say('network must be a map with one key, allow: a list of hosts (a name, *.suffix or an address, with an optional :PORT)', (other?.key as Node) ?? node);
    return undefined;
  }
  const value = allow.value as Node | null;
  const list = value ? (texts('network.allow')(value, say) as string[] | undefined) : [];
  return list?.filter((entry) => {
    try {
      parseAllowEntry(entry);
      return true;
    } catch (error) {
      if (!(error instanceof AllowEntryError)) throw error;
      say(`network.allow: ${error.message}`, value ?? node);
      return false;
    }
  });
};

/** The schema: every key the file may hold, and how its value is checked. */
const FIELDS: Record<string, Check> = {
  setup: texts('setup'),
  copy: globs('copy'),
  ports: whole('ports', 1, 100),
  verify: text('verify', 'a shell command'),
  verify_attempts: whole('verify_attempts', 0, 10),
  teardown: texts('teardown'),
  prompt: text('prompt', 'text for the prompt'),
  protect: globs('protect'),
  env: names,
  network,
  timeouts,
  attempts: whole('attempts', 1, MAX_ATTEMPTS),
};

/**
 * Where the mistake is for a person: yaml reports a flow collection left open (`[npm test`) where
 * its closing bracket was due, often the next line; the line is the one of the bracket that opened
 * it. Brackets inside quotes are passed over. Any other error stays where yaml puts it.
 */
function unclosedAt(source: string, message: string, at: number): number {
  const open = /^Flow sequence/.test(message) ? '[' : /^Flow map/.test(message) ? '{' : null;
  if (!open) return at;
  const close = open === '[' ? ']' : '}';
  const opened: number[] = [];
  let quote: string | null = null;
  for (let i = 0; i < Math.min(at, source.length); i++) {
    const c = source[i]!;
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '#' && (i === 0 || /\s/.test(source[i - 1]!))) {
      // A comment runs to the end of its line: the loop goes on at the newline.
      const end = source.indexOf('\n', i);
      i = end < 0 ? source.length : end - 1;
    } else if (c === open) opened.push(i);
    else if (c === close) opened.pop();
  }
  return opened.length ? opened[opened.length - 1]! : at;
}

/** Parses and checks the file's text: the policy, or every mistake with its line. */
export function parseWorkflow(source: string): { workflow: Workflow | null; problems: WorkflowProblem[] } {
  const lines = new LineCounter();
  const doc = parseDocument(source, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const problems: WorkflowProblem[] = doc.errors.map((e) => ({
    line: lines.linePos(unclosedAt(source, e.message, e.pos[0])).line,
    message: e.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, ''),
  }));
  if (problems.length) return { workflow: null, problems };
  const lineOf = (node: Node | null | undefined) => (node?.range ? lines.linePos(node.range[0]).line : 1);
  const root = doc.contents as Node | null;
  if (root === null || (isScalar(root) && root.value === null)) return { workflow: { ...EMPTY_WORKFLOW, timeouts: { ...DEFAULT_STEP_TIMEOUTS } }, problems };
  if (!isMap(root))
    return { workflow: null, problems: [{ line: lineOf(root), message: `the file must be a map of keys (${Object.keys(FIELDS).join(', ')})` }] };
  const values: Record<string, unknown> = {};
  for (const pair of root.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : '';
    const check = FIELDS[key];
    if (!check) {
      problems.push({ line: lineOf(pair.key as Node), message: `unknown key '${key}' (one of ${Object.keys(FIELDS).join(', ')})` });
      continue;
    }
    const value = (pair.value ?? null) as Node | null;
    const say = (message: string, at?: Node) => problems.push({ line: lineOf(at ?? value ?? (pair.key as Node)), message });
    if (value === null || (isScalar(value) && value.value === null)) {
      say(`${key} has no value`);
      continue;
    }
    values[key] = check(value, say);
  }
  // Best-of-N is decided by the check: without one there is nothing to pick the winner.
  if (typeof values.attempts === 'number' && values.attempts > 1 && typeof values.verify !== 'string') {
    const at = root.items.find((p) => isScalar(p.key) && p.key.value === 'attempts');
    problems.push({ line: lineOf(at?.key as Node), message: 'attempts needs verify: the check picks the winning attempt' });
  }
  if (problems.length) return { workflow: null, problems };
  const str = (v: unknown) => (typeof v === 'string' ? v : null);
  return {
    workflow: {
      setup: (values.setup as string[] | undefined) ?? [],
      copy: (values.copy as string[] | undefined) ?? [],
      ports: (values.ports as number | undefined) ?? 0,
      verify: str(values.verify),
      verifyAttempts: (values.verify_attempts as number | undefined) ?? 0,
      teardown: (values.teardown as string[] | undefined) ?? [],
      prompt: str(values.prompt),
      protect: (values.protect as string[] | undefined) ?? [],
      env: (values.env as string[] | undefined) ?? [],
      networkAllow: (values.network as string[] | undefined) ?? [],
      timeouts: { ...DEFAULT_STEP_TIMEOUTS, ...(values.timeouts as object | undefined) },
      ...(values.attempts !== undefined ? { attempts: values.attempts as number } : {}),
    },
    problems,
  };
}
