// Each flag is declared once, as gh binds a flag to a typed field: a table row holds commander's
// syntax and help, and the type of the parsed flags is derived from the same rows. The rows and
// their types are the engine's (src/dispatch/flags/row.ts: the dispatch commands' rows say the
// options they fill); this module gives them to commander.
import { type Command, Option } from 'commander';
import type { Flag, FlagsOf } from '../dispatch/flags/row.js';

export { flag, rephrase } from '../dispatch/index.js';
export type { AttributeOf, Flag, FlagsOf } from '../dispatch/flags/row.js';

type Row = Flag;

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
