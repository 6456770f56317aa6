// The engine's own functions, which every caller handed back to it: the agent's process, the
// card's worktree (or the checkout in place) and its commits, the prompt and the clock. Named once
// here, so a command or a test harness passes only what it alone knows and swaps single members.
import { runAgentProcess } from '../agent/run-process.js';
import { changedPathsOf, commitsSince } from '../git/changes.js';
import { checkoutInPlace, prepareWorktree } from '../git/worktree.js';
import { systemClock } from '../ports.js';
import { buildPrompt } from '../prompt.js';
import type { DispatchDeps } from './types.js';

/** What only the caller knows: the service, the state folder, where progress goes, the abort signal. */
export type CallerDeps = Pick<DispatchDeps, 'service' | 'stateDir' | 'output' | 'signal'> & Partial<DispatchDeps>;

/** The engine's dependencies: its own functions, then the caller's, which may replace any of them. */
export function dispatchDeps(given: CallerDeps): DispatchDeps {
  return { runAgentProcess, prepareWorktree, checkoutInPlace, commitsSince, changedPaths: changedPathsOf, buildPrompt, clock: systemClock, ...given };
}
