// The flags of `svc api`, each declared once (flag-table.ts): register.ts adds them to the
// commands, and the handlers take the types derived from them.
import { flag, type FlagsOf } from '../flag-table.js';

const collect = (value: string, previous: string[] = []) => [...previous, value];

export const API_FLAGS = [
  flag('-f, --field <key=value>', 'a body field (or a query parameter on GET; repeatable)', { parse: collect }),
  flag('--input <file>', 'the request body from a file (- for stdin)'),
  flag('--paginate', 'follow nextCursor and print every row'),
];
export type ApiFlags = FlagsOf<typeof API_FLAGS>;
