// Which refs a run's installation token may push: `refs/heads/svc/<KEY>` of the run's own cards,
// and their attempt branches `refs/heads/svc/<KEY>-attempt-<n>`; nothing else — not the default
// branch, not a tag, not another run's card (docs/hosted.md: the default branch is protected, as a
// team's would be).
//
// git decides it, in an `update` hook that receive-pack runs once per pushed ref: the verdict is
// per ref and the refusal is git's own (`! [remote rejected] main -> main (hook declined)` after
// the hook's `remote:` line), whatever the protocol version or the request's encoding. The hook
// gets the allowed keys through the environment; without them it refuses everything.
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The environment variable carrying the run's card keys, space-separated, to the hook. */
export const PUSH_KEYS_ENV = 'SVC_PUSH_KEYS';

// `set -f`: a key is matched literally, never expanded as a file pattern.
const UPDATE_HOOK = `#!/bin/sh
# svc server: receive-pack's update hook (<ref> <old> <new>). Written by the service; edits are lost.
set -f
ref=$1
for key in $${PUSH_KEYS_ENV}; do
  case $ref in
    "refs/heads/svc/$key") exit 0 ;;
    "refs/heads/svc/$key-attempt-"*)
      n=\${ref#"refs/heads/svc/$key-attempt-"}
      case $n in '' | 0* | *[!0-9]*) ;; *) exit 0 ;; esac ;;
  esac
done
echo "protected ref $ref: a run's token pushes only refs/heads/svc/<KEY> (or svc/<KEY>-attempt-<n>) of its own cards: \${${PUSH_KEYS_ENV}:-none}" >&2
exit 1
`;

/** Keys as the hook may see them: plain names only (a key is data, never shell syntax). */
const KEY = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/** The hook's environment for a run whose cards are `keys`. */
export function pushKeysEnv(keys: readonly string[]): Record<string, string> {
  return { [PUSH_KEYS_ENV]: keys.filter((k) => KEY.test(k)).join(' ') };
}

const written = new Set<string>();

/**
 * The hooks folder of the git root (`<gitRoot>/.svc-hooks`, a name no repository can have), its
 * update hook written once per process. Written aside and renamed in, so a push running the hook
 * never sees half a file.
 */
export function ensureHooksDir(gitRoot: string): string {
  const dir = join(gitRoot, '.svc-hooks');
  if (written.has(dir)) return dir;
  const hook = join(dir, 'update');
  if (!existsSync(hook) || readFileSync(hook, 'utf8') !== UPDATE_HOOK) {
    mkdirSync(dir, { recursive: true, mode: 0o755 });
    const aside = `${hook}.${process.pid}.tmp`;
    writeFileSync(aside, UPDATE_HOOK, { mode: 0o755 });
    chmodSync(aside, 0o755);
    renameSync(aside, hook);
  }
  written.add(dir);
  return dir;
}
