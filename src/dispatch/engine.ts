// The engine behind the front door (index.ts hands it out with loadEngine): the checks a command
// makes before a run opens (its base, its agents' identity and user, its workflow, its network)
// and whether this is a hosted runner. Loaded only by a command that runs something (the dispatch
// commands, `svc attach`, the demo) or reads a workflow file; the run itself is index.ts's
// startDispatch, openHostedRun and startHostedRun (start.ts).
export { checkMaxCost } from './lifecycle/dispatch.js';
// Before a run: its base, its repository's git config, who its agents' commits are by; git itself,
// since a command starts no program of its own (test/architecture/process-runner.test.ts).
export { resolveBase, ownCommitArgs } from './git/worktree.js';
export { WorktreeError, branchFor, gitAnswer, gitRun, hasOrigin, repoPaths } from './git/run-git.js';
export { credentialsInGitConfig, gitCredentialsWarning } from './git/config-credentials.js';
export { agentIdentity, parseIdentity } from './git/identity.js';
export { readGitConfig } from './git/config-list.js';
export { ensurePrivateDir } from './state/private-dir.js';
// .svc/workflow.yml (docs/workflow.md)
export { loadWorkflow, WorkflowFileError, workflowSourceAt, workflowSourceInTree } from './workflow/load.js';
export { applyWorkflowFlags, describeWorkflow, WORKFLOW_FILE } from './workflow/policy.js';

/** Parses a workflow file's text (workflow/parse.ts, loaded only when there is a file). */
export async function parseWorkflowSource(source: string): Promise<ReturnType<typeof import('./workflow/parse.js').parseWorkflow>> {
  return (await import('./workflow/parse.js')).parseWorkflow(source);
}
// A leg's network (docs/trust.md)
export { AllowEntryError, Allowlist, formatAllowEntry } from './fence/allowlist.js';
export { agentHosts, gitHost, urlEntry } from './fence/hosts.js';
export { NETWORK_MODES } from './fence/modes.js';
export { probeBwrap } from './fence/bwrap.js';
export { nftWorks } from './fence/nft.js';
// Whether this is a hosted runner (docs/hosted.md); what a hosted run needs is index.ts's loadHosted.
export { isHostedEnvironment, RUN_TOKEN_ENV } from './hosted/environment.js';
