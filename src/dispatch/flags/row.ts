// A flag is declared once, as gh binds a flag to a typed field: a row holds commander's syntax and
// help, and the type of the parsed flags is derived from the same rows (the property name from the
// long flag, as commander names it; the value from the syntax, choices or parser). Renaming a flag
// renames its property, so a reader of the old name no longer compiles. A dispatch flag's row also
// says which option of the run it fills, its default, whether run.json keeps it for `continue`,
// and whether it travels with `--hosted` and `svc attach` (table.ts). Here, on the engine's side,
// so the engine's options take their types from the rows; commander itself is the commands' own
// (src/commands/flag-table.ts adds the rows to a command).

/** What a flag's property is: absent unless given, always there (default or required), or only a negation. */
type Mode = 'optional' | 'always' | 'negation';

/**
 * How a flag's value becomes its option's and back: `parse` takes what commander gives (or a
 * variable's text) and throws a one-line usage error naming `source`; `read` takes run.json's
 * value when it has the shape written; `flag` gives the flag that sets the option again (`continue`).
 */
export interface Kind<V, R = string> {
  parse(raw: R, source: string): V;
  read(value: unknown): V | undefined;
  flag(value: V): R | undefined;
  /** The option where the flag is absent and the row names no default (a switch: false). */
  readonly absent?: V;
}

/** `--hosted` refuses the flag, saying where a hosted run sets it instead (`attach`: svc attach). */
export interface Hosted {
  where: 'attach' | ((name: string) => string);
  /** Whether the value as typed is refused (default: given at all, `false` for a lone negation). */
  when?: (value: unknown) => boolean;
  /** The flag as the refusal names it (default: the row's long flag). */
  as?: string;
}

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

/** What a row may add to its syntax and help: commander's part, then the run option's (table.ts). */
export interface FlagMore {
  choices?: readonly string[];
  parse?: (value: string, previous: never) => unknown;
  default?: unknown;
  required?: true;
  /** The run's option it fills (`timeouts.idleMs`: a field of `timeouts`). */
  to?: string;
  kind?: { parse(raw: never, source: string): unknown; read(value: unknown): unknown; flag(value: never): unknown };
  /** The option's value where none is given, as the flag would be typed; the help line may say it. */
  byDefault?: string | number | boolean;
  /** Absent and without a default, the option is null (run.json writes null too). */
  orNull?: true;
  /** The option may be left out (an options object built by hand, a run.json of an older svc). */
  optional?: true;
  /** The variable that stands for the flag where it is not given; then the stored config's key. */
  env?: string;
  config?: string;
  /** run.json keeps the option, and `continue RUN_ID` gives it again where the user passes no flag. */
  replay?: true;
  hosted?: Hosted;
  /** `svc attach` takes the flag (a string: in the help line it reads there). */
  attach?: true | string;
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

/** A row of a flag table; its type carries the property it fills. `help` may say the row's default. */
export function flag<const S extends string, const M extends FlagMore = {}>(
  flags: S,
  help: string | ((byDefault: string) => string),
  more?: M,
): Flag<S, ValueOf<S, M>, ModeOf<S, M>> & M {
  return { flags, help: typeof help === 'string' ? help : help(String(more?.byDefault)), ...more } as Flag<S, ValueOf<S, M>, ModeOf<S, M>> & M;
}

/** The same flag with the help line a command says it in (`svc attach` reads some flags its own way). */
export function rephrase<F extends Flag>(f: F, help: string): F {
  return { ...f, help };
}

/** The long flag of a row (`--no-push`) and its property, as commander names it (`push`). */
export function longOf(row: Pick<Flag, 'flags'>): string {
  return /--[\w-]+/.exec(row.flags)![0];
}
export function attributeOf(row: Pick<Flag, 'flags'>): string {
  return longOf(row)
    .replace(/^--(no-)?/, '')
    .replace(/-(.)/g, (_, c: string) => c.toUpperCase());
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

// The run's options a table fills (table.ts): each row with `to`, of its kind's type; a dotted
// `to` is a field of an object option (`timeouts`).
type ToOf<R> = R extends { to: infer K extends string } ? K : never;
type RowAt<R, K> = R extends { to: K } ? R : never;
type FieldValue<R> = (R extends { kind: { parse(...args: never[]): infer V } } ? V : never) | (R extends { orNull: true } ? null : never);
type Plain<K> = K extends `${string}.${string}` ? never : K;
type GroupOf<K> = K extends `${infer G}.${string}` ? G : never;
type Inner<R, G extends string> = R extends { to: `${G}.${infer S}` } ? Omit<R, 'to'> & { to: S } : never;
/** Optional in the options: `optional`; in run.json (`written`): `optional` and not written as null. */
type IsOptional<R, Written> = R extends { optional: true } ? ([Written] extends [true] ? (R extends { orNull: true } ? false : true) : true) : false;
type Fields<R, Keys extends string, W> = {
  [K in Keys as IsOptional<RowAt<R, K>, W> extends true ? never : K]: FieldValue<RowAt<R, K>>;
} & { [K in Keys as IsOptional<RowAt<R, K>, W> extends true ? K : never]?: FieldValue<RowAt<R, K>> };

/** The options the rows `R` (a union) fill; `W` true: as run.json writes them (a null is written). */
export type OptionsOf<R, W = false> = Flat<Fields<R, Plain<ToOf<R>>, W> & { [G in GroupOf<ToOf<R>>]: Flat<Fields<Inner<R, G>, ToOf<Inner<R, G>>, W>> }>;
