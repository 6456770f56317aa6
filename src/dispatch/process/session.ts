// A program svc keeps for its whole life and talks to over its pipes (the fence's `nft -i`: a
// leg's rules in a millisecond or two, where a new nft costs several). Started here like every
// other child; what is said over the pipes is the caller's.
import type { ChildProcessWithoutNullStreams } from 'node:child_process';

/** `file` with `args`, stdin, stdout and stderr piped to svc, in `/`, with svc's environment. */
export function startSession(file: string, args: readonly string[]): ChildProcessWithoutNullStreams {
  return process.getBuiltinModule('node:child_process').spawn(file, args, { cwd: '/', stdio: ['pipe', 'pipe', 'pipe'] });
}
