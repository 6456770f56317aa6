// `--hosted`: the engine selects the card set exactly as a local run would, then opens the run
// with `origin: hosted` for a hosted runner to execute (openHostedRun), and nothing runs here. What
// travels is what the open's body holds (agent, model, scope, cards); every other flag that shapes
// the run is refused here before anything opens, naming where it is set instead (docs/hosted.md,
// "What travels").
import type { DispatchOptions } from '../../dispatch/lifecycle/types.js';
import { UsageError } from '../exit-codes.js';
import type { DispatchFlags } from './flags.js';

const CARRIED = 'a hosted run carries only its agent, model and cards';
const ATTACH = (flag: string) => `pass ${flag} to the runner's svc attach`;
const WORKFLOW = (key: string) => `set ${key} in the repository's .svc/workflow.yml`;

/** A flag that shapes the run: its name as typed (null: not given), and where a hosted run sets it. */
type Refusal = [key: keyof DispatchFlags, name: (value: unknown) => string | null, where: (name: string) => string];

const fixed = (name: string) => (v: unknown) => (v === undefined ? null : name);
const either = (on: string, off: string) => (v: unknown) => (v === undefined ? null : v === false ? off : on);

const NOT_CARRIED: Refusal[] = [
  ['agentCmd', fixed('--agent-cmd'), () => "set the runner's agent with svc server --hosted-agent-cmd (or svc attach --agent-cmd)"],
  ['agentFormat', fixed('--agent-format'), ATTACH],
  ['agentUser', fixed('--agent-user'), () => 'the runner gives each agent a pool uid of its own'],
  ['agentEnv', fixed('--agent-env'), () => WORKFLOW('env:')],
  ['gitIdentity', fixed('--git-identity'), ATTACH],
  ['reconcile', (v) => (v === false ? '--no-reconcile' : null), ATTACH],
  ['network', fixed('--network'), ATTACH],
  ['allowHost', fixed('--allow-host'), () => `${WORKFLOW('network: allow:')} (or pass --allow-host to the runner's svc attach)`],
  ['onFailure', fixed('--on-failure'), ATTACH],
  ['parallel', fixed('--parallel'), ATTACH],
  ['timeout', fixed('--timeout'), () => "set the run's deadline with svc server --hosted-timeout (or svc attach --timeout)"],
  ['idleTimeout', fixed('--idle-timeout'), ATTACH],
  ['cardTimeout', fixed('--card-timeout'), ATTACH],
  ['killGrace', fixed('--kill-grace'), ATTACH],
  ['heartbeatInterval', fixed('--heartbeat-interval'), () => 'a hosted run sends no heartbeat'],
  ['sendLogs', fixed('--send-logs'), ATTACH],
  ['allowEmpty', fixed('--allow-empty'), ATTACH],
  ['maxCost', fixed('--max-cost'), ATTACH],
  // A lone negation: commander sets `worktree: true` when --no-worktree is not given.
  ['worktree', (v) => (v === false ? '--no-worktree' : null), ATTACH],
  ['push', either('--push', '--no-push'), ATTACH],
  ['pr', either('--pr', '--no-pr'), ATTACH],
  ['draft', fixed('--draft'), ATTACH],
  ['githubApiUrl', fixed('--github-api-url'), () => "set SVC_GITHUB_API_URL in the runner's environment (or svc attach --github-api-url)"],
  ['verify', either('--verify', '--no-verify'), () => WORKFLOW('verify:')],
  ['setup', fixed('--setup'), () => WORKFLOW('setup:')],
  ['attempts', fixed('--attempts'), () => WORKFLOW('attempts:')],
  ['pushAttempts', fixed('--push-attempts'), () => "a hosted run's attempts stop once one won, and only the winner's svc/KEY is pushed"],
  ['allAttempts', fixed('--all-attempts'), () => "a hosted run's attempts stop once one won, and only the winner's svc/KEY is pushed"],
  // One agent travels: a second --agent is an attempt's.
  [
    'agent',
    (v) => (Array.isArray(v) && v.length > 1 ? '--agent (more than once)' : null),
    () => `${WORKFLOW('attempts:')} for best of N with the run's one agent`,
  ],
  [
    'model',
    (v) => (Array.isArray(v) && v.length > 1 ? '--model (more than once)' : null),
    () => `${WORKFLOW('attempts:')} for best of N with the run's one model`,
  ],
];

/**
 * Refuses, in one line, the first flag given with `--hosted` that openDispatchRun's body cannot carry: the
 * runner would never see it, and the client sends no field the contract does not list. Called
 * with the flags as typed (not those `continue` takes from a recorded run).
 */
export function checkHostedFlags(flags: DispatchFlags): void {
  if (flags.report?.length) throw new UsageError('--report needs a run executed here; a hosted run reports where it runs');
  for (const [key, name, where] of NOT_CARRIED) {
    const typed = name(flags[key]);
    if (typed === null) continue;
    throw new UsageError(`${typed} does not travel with --hosted (${CARRIED}): ${where(typed)}`);
  }
}

/** `auto` loops over runs on this machine: a hosted runner is handed one run. */
export function refuseHostedAuto(opts: Pick<DispatchOptions, 'command'>): void {
  if (opts.command === 'auto') throw new UsageError('auto loops over runs on this machine; open hosted runs with batch or next instead');
}
