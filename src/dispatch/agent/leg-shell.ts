// The shell scripts a leg of an agent user runs as that user (./clone.ts). Each start of a
// process from node costs a fork of node itself, so the steps that belong together run as one
// shell; every value reaches a script as a positional parameter, never spliced into its text.

/**
 * Kills every other process of the caller's uid, detached or not, as Nix does with its build users:
 * the kernel signals them all in one pass, and a process with SIGKILL pending cannot fork.
 */
export const KILL_ALL = 'kill -9 -1 2>/dev/null';

/** The exit status of a leg's shell when the clone could not be made (the agent never started). */
export const CLONE_FAILED = 125;

/** The snapshot's author: svc, not the agent (the commit only carries uncommitted files across). */
const SNAPSHOT_IDENT = 'GIT_AUTHOR_NAME=svc GIT_AUTHOR_EMAIL=svc@localhost GIT_COMMITTER_NAME=svc GIT_COMMITTER_EMAIL=svc@localhost';

/**
 * `svc_clone C W B BASE NAME EMAIL`: the agent's clone of the repository's git dir C in W,
 * `--shared` (it borrows the objects), with svc's identity in its own config (where an agent's
 * tool runs git with an environment of its own, the agent's home config is not read). The worktree is on its branch B, so B stands at BASE and the clone goes
 * straight onto it; a review's side branch exists only in its detached worktree: then the clone
 * is checked out with `-B` at BASE. No template: git's sample hooks are files to write and delete
 * on every leg, and the agent may add hooks of its own anyway.
 */
const CLONE_FN = `svc_clone() {
  git clone --quiet --template= --shared \${5:+-c "user.name=$5"} \${6:+-c "user.email=$6"} --branch "$3" -- "$1" "$2" 2>/dev/null ||
  { rm -rf "$2"; git clone --quiet --template= --shared \${5:+-c "user.name=$5"} \${6:+-c "user.email=$6"} --no-checkout -- "$1" "$2" && git -C "$2" checkout --quiet -B "$3" "$4"; } ||
  { echo "svc: could not make the agent's clone" >&2; return 1; }
}`;

/**
 * `svc_collect W B BASE D T`, after the agent, as its uid: nothing of the agent's may run on (it
 * could move its branch while it is read); one status says where HEAD is, on which branch, and
 * what is uncommitted; uncommitted work (untracked files included, ignored ones not) becomes a
 * snapshot commit on top of the branch through a temporary index, only while the agent is on its
 * branch; a bundle of the branch beyond BASE (and the snapshot) goes to descriptor 3, svc's own
 * file (the agent never names a path svc would open); then the uid is emptied of processes once
 * more (anything git's config started) and the leg's folder D of files. Prints the status, then
 * `# svc-sha SHA`, `# svc-wip SHA`, `# svc-bundled N`. Returns 90–93 when the work could not be
 * read; the folder is then kept.
 */
const COLLECT_FN = `svc_collect() {
  ${KILL_ALL}
  W=$1 B=$2 BASE=$3 D=$4 T=$5
  cd "$W" 2>/dev/null || { echo "# svc-no-clone"; cd / && find "$D" -mindepth 1 -delete; return 0; }
  st=$(git status --porcelain=v2 --branch --untracked-files=all) || return 90
  printf '%s\\n' "$st"
  # Read with the shell's own pattern matching: no process per question.
  sha= wip= oid= onit= dirty=
  set -f; IFS='
'
  for line in $st; do
    case $line in
      "# branch.oid "*) oid=\${line#"# branch.oid "} ;;
      "# branch.head $B") onit=1 ;;
      "# "*) ;;
      *) dirty=1 ;;
    esac
  done
  unset IFS; set +f
  if [ -n "$onit" ]; then
    sha=$oid
    if [ -n "$dirty" ]; then
      wip=$(export GIT_INDEX_FILE="$T/svc-snapshot.index" ${SNAPSHOT_IDENT}
        git read-tree "$sha" && git add --all && tree=$(git write-tree) &&
        git commit-tree "$tree" -p "$sha" -m 'svc: uncommitted work of the agent') || return 93
      git update-ref refs/svc/uncommitted "$wip" || return 93
    fi
  else
    sha=$(git rev-parse --verify --quiet "refs/heads/$B^{commit}")
  fi
  echo "# svc-sha $sha"
  [ -z "$wip" ] || echo "# svc-wip $wip"
  set --
  [ -z "$sha" ] || [ "$sha" = "$BASE" ] || set -- "refs/heads/$B"
  [ -z "$wip" ] || set -- "$@" refs/svc/uncommitted
  if [ $# -gt 0 ]; then git bundle create --quiet - "$@" "^$BASE" >&3 || return 92; fi
  echo "# svc-bundled $#"
  ${KILL_ALL}
  cd / && find "$D" -mindepth 1 -delete
}`;

/** Makes the clone only (`$1`–`$6` as svc_clone's), for a workflow's steps that need it before the agent. */
export const CLONE = `${CLONE_FN}
svc_clone "$1" "$2" "$3" "$4" "$5" "$6"`;

/** Collects and clears a leg (`$1`–`$5` as svc_collect's): its status is the script's. */
export const COLLECT_AND_CLEAR = `${COLLECT_FN}
svc_collect "$1" "$2" "$3" "$4" "$5"`;

/**
 * A whole leg in one process start: `$1`–`$6` as svc_clone's (the clone is made unless it is
 * there), `$7` the leg's folder, `$8` its temp folder; the agent's argv follows. The agent runs as a child without descriptors 3 and 4; when
 * it ends, the shell collects the leg (its lines to descriptor 3, the bundle to descriptor 4,
 * both svc's files, ending with `# svc-collected STATUS`) and ends as the agent did: its exit
 * status, or the signal that killed it. A TERM or INT for the group reaches the agent; the shell
 * waits for it and still collects. When the shell itself is killed first, svc collects instead.
 */
export const LEG = `${CLONE_FN}
${COLLECT_FN}
if [ ! -d "$2" ]; then svc_clone "$1" "$2" "$3" "$4" "$5" "$6" || { echo "# svc-no-clone" >&3; exit ${CLONE_FAILED}; }; fi
LW=$2 LB=$3 LBASE=$4 LD=$7 LT=$8
shift 8
trap 'svc_stop=1' TERM INT
cd "$LW" && "$@" 3>&- 4>&-
rc=$?
exec >&3 2>/dev/null 3>&4 4>&-
svc_collect "$LW" "$LB" "$LBASE" "$LD" "$LT"
echo "# svc-collected $?"
exec >&- 3>&-
trap - TERM INT
if [ "$rc" -gt 128 ] && sig=$(kill -l "$rc" 2>/dev/null); then kill -s "$sig" $$; fi
exit "$rc"`;
