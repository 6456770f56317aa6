// The flags of `svc auth login`, each declared once (flag-table.ts): register.ts adds them to the
// commands, and the handlers take the types derived from them.
import { flag, type FlagsOf } from '../flag-table.js';

export const LOGIN_FLAGS = [flag('--with-token', 'read the token from standard input')];
export type AuthLoginFlags = FlagsOf<typeof LOGIN_FLAGS>;
