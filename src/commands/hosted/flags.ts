// The flags of `svc attach`: rows of the dispatch commands' table (dispatch/flags.ts), a few with
// the help a hosted run reads them by, so each flag is still declared once. register.ts adds them;
// run.ts takes the type derived from them.
import { DISPATCH_FLAG as D, PULL_REQUEST_FLAGS } from '../dispatch/flags.js';
import { type FlagsOf, rephrase } from '../flag-table.js';

/** The dispatch flags a hosted execution honours, some said the way a hosted run reads them. */
export const ATTACH_FLAGS = [
  rephrase(D.repo, "the workspace the run's repositories are cloned into (SVC_REPO; default: the current directory)"),
  rephrase(D.agent, "agent preset (default: the run's agent): claude, codex, aider, gemini, opencode"),
  D.agentCmd,
  rephrase(D.model, "model passed to the agent preset (default: the run's model)"),
  D.agentEnv,
  D.agentUser,
  D.network,
  rephrase(
    D.allowHost,
    "a host a fenced leg may reach besides its agent's model API, the service and the git host: a name, *.suffix or an address, with an optional :PORT (repeatable)",
  ),
  rephrase(D.dryRun, "print the run's legs, repositories and branches; execute nothing, mint no git token"),
  rephrase(D.onFailure, 'what a failed leg does to the run (default halt)'),
  D.parallel,
  D.timeout,
  D.idleTimeout,
  D.cardTimeout,
  D.killGrace,
  D.sendLogs,
  D.allowEmpty,
  rephrase(D.maxCost, 'stop the run once the agents report this much spend'),
  rephrase(D.noWorktree, 'run in place in the clone instead of a worktree per card'),
  rephrase(D.push, "push an implemented leg's branch (the default)"),
  rephrase(D.noPush, "do not push implemented legs' branches"),
  D.gitIdentity,
  D.noReconcile,
  ...PULL_REQUEST_FLAGS,
];

/** `svc attach`'s flags as commander parses them (hosted/run.ts adds a dispatch command's --project). */
export type AttachFlags = FlagsOf<typeof ATTACH_FLAGS>;
