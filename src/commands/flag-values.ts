// Flag values several commands read: one rule and one message for each, wherever it is typed (the
// engine's, src/dispatch/flags/kinds.ts, since the dispatch flags' rows parse with them too).
export { usd, wholeNumber } from '../dispatch/index.js';
