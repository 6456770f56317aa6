// The flags of `svc attach`: the rows of the dispatch commands' table that say `attach`
// (src/dispatch/flags/table.ts), a few with the help a hosted run reads them by, so each flag is
// still declared once. register.ts adds them; run.ts takes the type derived from them.
import type { DispatchRow } from '../../dispatch/flags/table.js';
import { DISPATCH_FLAGS } from '../dispatch/flags.js';
import { type FlagsOf, rephrase } from '../flag-table.js';

type AttachRow = Extract<DispatchRow, { attach: true | string }>;

/** The dispatch flags a hosted execution honours, some said the way a hosted run reads them. */
export const ATTACH_FLAGS: AttachRow[] = DISPATCH_FLAGS.filter((row): row is AttachRow => 'attach' in row).map((row) =>
  typeof row.attach === 'string' ? rephrase(row, row.attach) : row,
);

/** `svc attach`'s flags as commander parses them (hosted/run.ts adds a dispatch command's --project). */
export type AttachFlags = FlagsOf<typeof ATTACH_FLAGS>;
