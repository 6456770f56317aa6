// Each flag is declared once, as gh binds a flag to a typed field: a table row holds commander's
// syntax and help, and the type of the parsed flags is derived from the same rows (the property
// name from the long flag, as commander names it; the value from the syntax, choices or parser).
// Renaming a flag renames its property, so a reader of the old name no longer compiles.
import { type Command, Option } from 'commander';

/** What a flag's property is: absent unless given, always there (default or required), or only a negation. */
type Mode = 'optional' | 'always' | 'negation';

/** One row: commander's flag syntax (`-p, --project <key>`), its help line, and how its value is read. */
export interface Flag<S extends string = string, V = unknown, M extends Mode = Mode> {
  readonly flags: S;
  readonly help: string;
  readonly choices?: readonly string[];
  /** Commander's argParser: the value and the previous one (a repeatable flag collects). */
  readonly parse?: (value: string, previous: never) => unknown;
  readonly default?: unknown;
  /** Commander's mandatory option: an error names it when it is missing. */
  readonly required?: true;
  /** Type only, never set: the property's value and mode. */
  readonly typed?: { value: V; mode: M };
}

interface FlagMore {
  choices?: readonly string[];
  parse?: (value: string, previous: never) => unknown;
  default?: unknown;
  required?: true;
}

type LongOf<S extends string> = S extends `${string}--${infer R}` ? (R extends `${infer N} ${string}` ? N : R) : never;
type Camel<S extends string> = S extends `${infer H}-${infer T}` ? `${H}${Capitalize<Camel<T>>}` : S;
/** The property commander stores a flag under: `--no-push` → `push`, `--agent-cmd` → `agentCmd`. */
export type AttributeOf<S extends string> = LongOf<S> extends `no-${infer R}` ? Camel<R> : Camel<LongOf<S>>;

type ModeOf<S extends string, M> = M extends { required: true } | { default: unknown } ? 'always' : LongOf<S> extends `no-${string}` ? 'negation' : 'optional';
type ValueOf<S extends string, M> =
  LongOf<S> extends `no-${string}`
    ? false
    : M extends { choices: readonly (infer C)[] }
      ? C
      : M extends { parse: (...args: never[]) => infer R }
        ? R
        : S extends `${string}<${string}`
          ? string
          : S extends `${string}[${string}`
            ? string | true
            : boolean;

/** A row of a flag table; its type carries the property it fills. */
export function flag<const S extends string, const M extends FlagMore = {}>(flags: S, help: string, more?: M): Flag<S, ValueOf<S, M>, ModeOf<S, M>> {
  return { flags, help, ...more };
}

/** The same flag with the help line a command says it in (`svc attach` reads some flags its own way). */
export function rephrase<F extends Flag>(f: F, help: string): F {
  return { ...f, help };
}

type Row = Flag<string, unknown, Mode>;
type KeysIn<R, M extends Mode> = R extends Flag<infer S, unknown, infer N> ? ([N] extends [M] ? AttributeOf<S> : never) : never;
type ValueAt<R, K> = R extends Flag<infer S, infer V, Mode> ? (AttributeOf<S> extends K ? V : never) : never;

/**
 * The parsed flags of a table. A flag given both ways (`--push`, `--no-push`; `--verify CMD`,
 * `--no-verify`) is one optional property with both values. A lone negation (`--no-worktree`) is
 * true unless given; it is optional all the same, so flags built by hand (tests, `continue`) may
 * leave it out.
 */
export type FlagsOf<T extends readonly Row[]> = Flat<
  { [K in KeysIn<T[number], 'optional'>]?: ValueAt<T[number], K> } & { [K in KeysIn<T[number], 'always'>]: ValueAt<T[number], K> } & {
    [K in Exclude<KeysIn<T[number], 'negation'>, KeysIn<T[number], 'optional' | 'always'>>]?: boolean;
  }
>;
/** One object type instead of an intersection of three (what an editor shows). */
type Flat<T> = { [K in keyof T]: T[K] };

/** The rows added to each command, so flagsOf can tell a command read with another command's table. */
const added = new WeakMap<Command, Set<Row>>();

/** Adds the table's flags to `cmd`, in the table's order. */
export function addFlags(cmd: Command, table: readonly Row[]): Command {
  const rows = added.get(cmd) ?? new Set<Row>();
  added.set(cmd, rows);
  for (const row of table) {
    const option = new Option(row.flags, row.help);
    if (row.choices) option.choices(row.choices);
    if (row.default !== undefined) option.default(row.default);
    if (row.parse) option.argParser(row.parse as (value: string, previous: unknown) => unknown);
    if (row.required) option.makeOptionMandatory();
    cmd.addOption(option);
    rows.add(row);
  }
  return cmd;
}

/**
 * The parsed flags of `cmd`, typed by `table`: the rows added to `cmd` must all be in it (a table
 * can be wider, as the dispatch commands' is: each takes part of it).
 */
export function flagsOf<const T extends readonly Row[]>(cmd: Command, table: T): FlagsOf<T> {
  const rows = new Set<Row>(table);
  const foreign = [...(added.get(cmd) ?? [])].filter((row) => !rows.has(row));
  if (foreign.length > 0) throw new Error(`${cmd.name()}: flags read with a table that lacks ${foreign.map((r) => r.flags).join(', ')}`);
  return cmd.opts() as FlagsOf<T>;
}
