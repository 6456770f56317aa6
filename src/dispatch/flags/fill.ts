// What the rows of table.ts do on their own, so a flag that only sets an option of the run needs
// nothing but its row: its option filled from the flag (else its variable, the stored config,
// its default), what run.json keeps of it and how that is read back, the flag `continue` gives
// again, and `--hosted`'s refusal of it (docs/dispatch.md, docs/hosted.md#opening-a-hosted-run---hosted-what-travels).
import { attributeOf, type Hosted, type Kind, longOf } from './row.js';
import { DISPATCH_FLAGS, type DispatchFlags, type DispatchRow, type FlagOptions, type ReplayedOptions } from './table.js';

/** A row that fills an option, seen without its literal types. */
interface OptionRow {
  flags: string;
  to: string;
  kind: Kind<unknown, unknown>;
  byDefault?: unknown;
  orNull?: true;
  optional?: true;
  env?: string;
  config?: string;
  replay?: true;
}

const OPTION_ROWS = DISPATCH_FLAGS.filter((r) => 'to' in r) as unknown as OptionRow[];
const REPLAY_ROWS = OPTION_ROWS.filter((r) => r.replay);

/** Where a flag that was not given is looked for: the environment, then the stored config. */
export interface FlagSources {
  env: Record<string, string | undefined>;
  config(key: string): unknown;
}

type Bag = Record<string, unknown>;
/** An optional option is left out where it says nothing: absent, false, '' or an empty list. */
const says = (v: unknown) => v !== undefined && v !== false && v !== '' && !(Array.isArray(v) && v.length === 0);
const bag = (v: unknown): Bag | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Bag) : undefined);

function get(from: Bag, to: string): unknown {
  const [top, inner] = to.split('.') as [string, string | undefined];
  return inner === undefined ? from[top] : bag(from[top])?.[inner];
}
function set(into: Bag, to: string, value: unknown): void {
  const [top, inner] = to.split('.') as [string, string | undefined];
  if (inner === undefined) into[top] = value;
  else into[top] = { ...bag(into[top]), [inner]: value };
}

/** One option: the flag as typed, else its variable, else the stored config, else its default. */
function optionValue(row: OptionRow, flags: Bag, sources: FlagSources | undefined): unknown {
  const raw = flags[attributeOf(row)];
  if (raw !== undefined) return row.kind.parse(raw, longOf(row));
  const variable = row.env ? sources?.env[row.env] : undefined;
  if (variable) return row.kind.parse(variable, row.env!);
  const stored = row.config ? sources?.config(row.config) : undefined;
  if (stored !== undefined) return stored;
  if (row.byDefault !== undefined) return row.kind.parse(row.byDefault, longOf(row));
  return row.kind.absent ?? (row.orNull ? null : undefined);
}

/**
 * The options the rows fill, from the flags of a command that takes the rows of `table` (the
 * others take their defaults, whatever the environment says); a bad value is a one-line usage error (exit 2) naming its flag.
 */
export function fillOptions(table: readonly { flags: string }[], flags: Partial<DispatchFlags>, sources?: FlagSources): FlagOptions {
  const taken = new Set(table.map(attributeOf));
  const out: Bag = {};
  for (const row of OPTION_ROWS) {
    const value = taken.has(attributeOf(row)) ? optionValue(row, flags as Bag, sources) : optionValue(row, {}, undefined);
    if (row.optional && value !== null && !says(value)) continue;
    set(out, row.to, value);
  }
  return out as FlagOptions;
}

/** The options of a run with nothing given: a caller spreads its own over them (the demo, a hosted run). */
export function defaultDispatchOptions(): FlagOptions {
  return fillOptions([], {});
}

/** What run.json keeps of the options the rows fill (`replay`), as it writes them. */
export function recordFlagOptions(opts: Partial<FlagOptions>): ReplayedOptions {
  const out: Bag = {};
  for (const row of REPLAY_ROWS) {
    const value = get(opts as Bag, row.to);
    if (row.orNull) set(out, row.to, value ?? null);
    else if (!row.optional || says(value)) set(out, row.to, value);
  }
  return out as ReplayedOptions;
}

/**
 * run.json's options read back: each the shape it was written in, or left out. An object option
 * (`timeouts`) is kept whole or not at all: a field of it that is not null when absent must be there.
 */
export function readFlagOptions(raw: unknown): Partial<ReplayedOptions> {
  const given = bag(raw) ?? {};
  const out: Bag = {};
  const broken = new Set<string>();
  for (const row of REPLAY_ROWS) {
    const [top, inner] = row.to.split('.') as [string, string | undefined];
    const written = get(given, row.to);
    const value = row.orNull && (written === null || (inner !== undefined && written === undefined)) ? null : row.kind.read(written);
    if (value !== undefined) set(out, row.to, value);
    else if (inner !== undefined) broken.add(top);
  }
  for (const top of broken) delete out[top];
  return out as Partial<ReplayedOptions>;
}

/** The flags that give run.json's options again (`continue RUN_ID`), but those the user gave. */
export function replayFlags(recorded: Partial<ReplayedOptions>, given: (key: keyof DispatchFlags) => boolean): Partial<DispatchFlags> {
  const out: Bag = {};
  for (const row of REPLAY_ROWS) {
    const key = attributeOf(row) as keyof DispatchFlags;
    const value = get(recorded as Bag, row.to);
    if (value === undefined || value === null || given(key)) continue;
    const typed = row.kind.flag(value);
    if (typed !== undefined) out[key] = typed;
  }
  return out as Partial<DispatchFlags>;
}

/**
 * The first flag given with `--hosted` that a hosted run does not carry, as typed, and where a
 * hosted run sets it instead; null: none.
 */
export function hostedRefusal(flags: Partial<DispatchFlags>): { name: string; where: string } | null {
  for (const row of DISPATCH_FLAGS as readonly (DispatchRow & { hosted?: Hosted })[]) {
    if (!row.hosted) continue;
    const value = (flags as Bag)[attributeOf(row)];
    const negation = longOf(row).startsWith('--no-');
    const refused = row.hosted.when ? row.hosted.when(value) : negation ? value === false : value !== undefined && value !== false;
    if (!refused) continue;
    const name = row.hosted.as ?? longOf(row);
    return { name, where: row.hosted.where === 'attach' ? `pass ${name} to the runner's svc attach` : row.hosted.where(name) };
  }
  return null;
}
