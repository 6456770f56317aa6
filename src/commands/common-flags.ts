// Flags several command groups take, declared once here (flag-table.ts): a group that says one
// in its own words rephrases the row instead of declaring the flag again.
import { flag } from './flag-table.js';

/** The project of commands that list or change a project's things; README.md#configuration's `--project`. */
export const PROJECT = flag('-p, --project <key>', 'project key (SVC_PROJECT)');

/** The cap on a listing's rows. */
export const LIMIT = flag('--limit <n>', 'most rows to print');
