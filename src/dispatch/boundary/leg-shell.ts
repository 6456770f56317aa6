// The shell scripts a leg of an agent user runs as that user (./clone.ts). Each start of a
// process from node costs a fork of node itself, so the steps that belong together run as one
// shell; every value reaches a script as a positional parameter, never spliced into its text.

/**
 * Kills every other process of the caller's uid, detached or not, as Nix does with its build users:
 * the kernel signals them all in one pass, and a process with SIGKILL pending cannot fork.
 */
export const KILL_ALL = 'kill -9 -1 2>/dev/null';

/** The exit status of a leg's shell when the clone could not be checked out (the agent never started). */
export const CLONE_FAILED = 125;

/** The snapshot's author: svc, not the agent (the commit only carries uncommitted files across). */
const SNAPSHOT_IDENT = 'GIT_AUTHOR_NAME=svc GIT_AUTHOR_EMAIL=svc@localhost GIT_COMMITTER_NAME=svc GIT_COMMITTER_EMAIL=svc@localhost';

/**
 * `svc_checkout W C B TRACK`, as the leg's uid: finishes the repository root wrote in W before the
 * hand-over (./agent-repo.ts) and checks it out. The source C's branches (as `origin/*`) and tags
 * are read as the leg starts and added to the packed refs, sorted as root's line for B before
 * them; where origin has B, TRACK (B's upstream, in git's config syntax) goes into the config, as
 * `git clone --branch B` would do. `read-tree -u` writes the index and the files of HEAD (every
 * file of the tree is the agent's from the start) meanwhile: it reads the packed refs before they
 * grow, since they are added only once it is done.
 */
const CHECKOUT_FN = `svc_checkout() {
  cd "$1" 2>/dev/null || return 1
  git read-tree -u --reset HEAD 2>/dev/null &
  rt=$!
  refs=$(git --git-dir="$2" for-each-ref --format='%(objectname) %(if:equals=refs/heads)%(refname:rstrip=-2)%(then)refs/remotes/origin/%(refname:lstrip=2)%(else)%(refname)%(end)' refs/heads refs/tags 2>/dev/null) || refs=
  wait "$rt" || { echo "svc: could not check out the agent's clone" >&2; return 1; }
  [ -n "$refs" ] || return 0
  printf '%s\\n' "$refs" >> .git/packed-refs || return 1
  case "
$refs
" in *" refs/remotes/origin/$3
"*) printf '%s' "$4" >> .git/config || return 1 ;; esac
}`;

/**
 * `svc_collect W B BASE D T [PIN]`, after the agent, as its uid: nothing of the agent's may run on (it
 * could move its branch while it is read); one status says where HEAD is, on which branch, and
 * what is uncommitted; uncommitted work (untracked files included, ignored ones not) becomes a
 * snapshot commit on top of the branch through a temporary index, only while the agent is on its
 * branch; a bundle of the branch beyond BASE (and the snapshot) goes to descriptor 3, svc's own
 * file (the agent never names a path svc would open); then the uid is emptied of processes once
 * more (anything git's config started) and the leg's folder D of files. PIN, the commit the
 * leg's check ran on, is where the branch is collected: a branch that moved after the check is
 * put back (`# svc-moved SHA` says where it was) and its uncommitted work is not taken. Prints the
 * status, then `# svc-sha SHA`, `# svc-wip SHA`, `# svc-bundled N`. Returns 90–93 when the work could not be
 * read; the folder is then kept.
 */
const COLLECT_FN = `svc_collect() {
  ${KILL_ALL}
  W=$1 B=$2 BASE=$3 D=$4 T=$5 PIN=$6
  { [ -e "$W/.git/index" ] && cd "$W"; } 2>/dev/null || { echo "# svc-no-clone"; cd / && find "$D" -mindepth 1 -delete; return 0; }
  st=$(git status --porcelain=v2 --branch --no-ahead-behind --untracked-files=all) || return 90
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
  if [ -n "$PIN" ] && [ "$sha" != "$PIN" ]; then
    echo "# svc-moved $sha"
    git update-ref "refs/heads/$B" "$PIN" || return 93
    sha=$PIN wip=
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

/** Checks the clone out only (`$1`–`$4` as svc_checkout's), for a workflow's steps that need it before the agent. */
export const CHECKOUT = `${CHECKOUT_FN}
svc_checkout "$1" "$2" "$3" "$4"`;

/** Collects and clears a leg (`$1`–`$6` as svc_collect's): its status is the script's. */
export const COLLECT_AND_CLEAR = `${COLLECT_FN}
svc_collect "$1" "$2" "$3" "$4" "$5" "$6"`;

/**
 * A whole leg in one process start: `$1`–`$4` as svc_checkout's (the clone is checked out unless
 * its index is there), `$5` where the branch started, `$6` the leg's folder, `$7` its temp folder;
 * the agent's argv follows. The agent runs as a child without descriptors 3 and 4; when
 * it ends, the shell collects the leg (its lines to descriptor 3, the bundle to descriptor 4,
 * both svc's files, ending with `# svc-collected STATUS`) and ends as the agent did: its exit
 * status, or the signal that killed it. A TERM or INT for the group reaches the agent; the shell
 * waits for it and still collects. When the shell itself is killed first, svc collects instead.
 */
export const LEG = `${CHECKOUT_FN}
${COLLECT_FN}
if [ ! -e "$1/.git/index" ]; then svc_checkout "$1" "$2" "$3" "$4" || { echo "# svc-no-clone" >&3; exit ${CLONE_FAILED}; }; fi
LW=$1 LB=$3 LBASE=$5 LD=$6 LT=$7
shift 7
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
