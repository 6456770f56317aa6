// Limits more than one room reads, in a file of no imports: the options and the workflow file
// both check them, and every command loads the options' module through the front door.

/** The most attempts of one card (`--attempts`, the workflow's `attempts:`). */
export const MAX_ATTEMPTS = 8;
