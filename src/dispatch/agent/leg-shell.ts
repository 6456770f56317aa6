// The shell scripts a leg of an agent user runs as that user (../agent-clone.ts). Each start of a
// process from node costs a fork of node itself, so the steps that belong together run as one
// shell; every value reaches a script as a positional parameter, never spliced into its text.

/**
 * Kills every other process of the caller's uid, detached or not, as Nix does with its build users:
 * the kernel signals them all in one pass, and a process with SIGKILL pending cannot fork.
 */
export const KILL_ALL = 'kill -9 -1 2>/dev/null';

/** The exit status of CLONE_THEN_EXEC when the clone could not be made (the agent never started). */
export const CLONE_FAILED = 125;

/**
 * Makes the agent's clone, then becomes the agent: `$1` the repository's git dir, `$2` the clone,
 * `$3` the branch, `$4` the commit it starts at; the agent's argv follows. `--shared` borrows the
 * repository's objects. The worktree is on its branch, so the branch stands at `$4` and the clone
 * goes straight onto it; a review's side branch exists only in its detached worktree: then the
 * clone is checked out with `-B` at `$4`. One process start for clone and agent alike.
 */
export const CLONE_THEN_EXEC = [
  'git clone --quiet --shared --branch "$3" -- "$1" "$2" 2>/dev/null ||',
  '{ rm -rf "$2"; git clone --quiet --shared --no-checkout -- "$1" "$2" && git -C "$2" checkout --quiet -B "$3" "$4"; } ||',
  `{ echo "svc: could not make the agent's clone" >&2; exit ${CLONE_FAILED}; }`,
  'cd "$2" && shift 4 && exec "$@"',
].join('\n');

/** The snapshot's author: svc, not the agent (the commit only carries uncommitted files across). */
const SNAPSHOT_IDENT = 'GIT_AUTHOR_NAME=svc GIT_AUTHOR_EMAIL=svc@localhost GIT_COMMITTER_NAME=svc GIT_COMMITTER_EMAIL=svc@localhost';

/**
 * After the agent, as its uid: nothing of the agent's may run on; one status says where HEAD is, on
 * which branch, and what is uncommitted; uncommitted work (untracked files included, ignored ones
 * not) becomes a snapshot commit on top of the branch through a temporary index, only while the
 * agent is on its branch; a bundle of the branch beyond the starting commit (and the snapshot)
 * goes to descriptor 3, svc's own file (the agent never names a path svc would open); then the
 * leg's uid is emptied of processes once more and its folder of files.
 * `$1` the clone, `$2` the branch, `$3` the starting commit, `$4` the leg's folder, `$5` its temp
 * folder. Prints the status, then `# svc-sha SHA`, `# svc-wip SHA` and `# svc-bundled N`.
 * Exit 90–93: the work could not be read; the folder is then kept.
 */
export const COLLECT_AND_CLEAR = `${KILL_ALL}
W=$1 B=$2 BASE=$3 D=$4 T=$5
cd "$W" 2>/dev/null || { echo "# svc-no-clone"; cd / && exec find "$D" -mindepth 1 -delete; }
st=$(git status --porcelain=v2 --branch --untracked-files=all) || exit 90
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
      git commit-tree "$tree" -p "$sha" -m 'svc: uncommitted work of the agent') || exit 93
    git update-ref refs/svc/uncommitted "$wip" || exit 93
  fi
else
  sha=$(git rev-parse --verify --quiet "refs/heads/$B^{commit}")
fi
echo "# svc-sha $sha"
[ -z "$wip" ] || echo "# svc-wip $wip"
set --
[ -z "$sha" ] || [ "$sha" = "$BASE" ] || set -- "refs/heads/$B"
[ -z "$wip" ] || set -- "$@" refs/svc/uncommitted
if [ $# -gt 0 ]; then git bundle create --quiet - "$@" "^$BASE" >&3 || exit 92; fi
echo "# svc-bundled $#"
${KILL_ALL}
cd / && exec find "$D" -mindepth 1 -delete`;
