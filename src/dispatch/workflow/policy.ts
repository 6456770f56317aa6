// The repository's own workflow, `.svc/workflow.yml` (docs/workflow.md): what svc does around each
// leg's agent, as the engine uses it. The file is parsed by parse.ts, loaded only when a repository
// has one: yaml is 6-7 ms of every dispatch command's start, and most repositories have no file.

/** Where the policy lives in the repository (read from the base commit, never the worktree). */
export const WORKFLOW_FILE = '.svc/workflow.yml';

/** Default time limits of the steps. */
export const DEFAULT_STEP_TIMEOUTS = { setup: 15 * 60_000, verify: 15 * 60_000, teardown: 2 * 60_000 } as const;

export type StepName = keyof typeof DEFAULT_STEP_TIMEOUTS;

/** The policy as the engine uses it, flags already applied (see applyWorkflowFlags). */
export interface Workflow {
  /** Shell commands run in order in each new worktree before the agent; the first failure fails the leg. */
  setup: string[];
  /** Globs of untracked files of the user's checkout copied into each worktree. */
  copy: string[];
  /** Ports reserved per leg (`SVC_PORT` is the first); 0: none. */
  ports: number;
  /** The check after the agent; null: none. */
  verify: string | null;
  /** How many times the agent is started again after a failed check. */
  verifyAttempts: number;
  /** Shell commands run after the leg whatever its outcome. */
  teardown: string[];
  /** Text added to every card's prompt. */
  prompt: string | null;
  /** Globs of paths the agent must leave as the base commit has them (WORKFLOW_FILE always is). */
  protect: string[];
  /** Variables of svc's environment the agent and the steps get besides the allowlist (docs/agents.md). */
  env: string[];
  /** `network: allow:`: hosts a fenced leg may reach besides the preset's and the git host (docs/trust.md). */
  networkAllow: string[];
  timeouts: Record<StepName, number>;
  /** Best-of-N (`attempts:`): agents run side by side on each card, the check picks one; absent: 1. */
  attempts?: number;
}

/** One mistake in the file: its line (1-based) and what is wrong. */
export interface WorkflowProblem {
  line: number;
  message: string;
}

export const EMPTY_WORKFLOW: Workflow = {
  setup: [],
  copy: [],
  ports: 0,
  verify: null,
  verifyAttempts: 0,
  teardown: [],
  prompt: null,
  protect: [],
  env: [],
  networkAllow: [],
  timeouts: { ...DEFAULT_STEP_TIMEOUTS },
};

/** `--no-verify`, `--verify CMD`, `--setup CMD` over the file (or over no file). */
export interface WorkflowFlags {
  /** false: `--no-verify`; a string: `--verify CMD`. */
  verify?: string | false;
  setup?: string;
}

/** The policy a run uses: the file's, with the flags over it; null when neither says anything. */
export function applyWorkflowFlags(file: Workflow | null, flags: WorkflowFlags): Workflow | null {
  if (!file && flags.verify === undefined && flags.setup === undefined) return null;
  const base = file ?? { ...EMPTY_WORKFLOW, timeouts: { ...DEFAULT_STEP_TIMEOUTS } };
  return {
    ...base,
    ...(flags.setup !== undefined ? { setup: [flags.setup] } : {}),
    ...(flags.verify === false ? { verify: null, verifyAttempts: 0 } : typeof flags.verify === 'string' ? { verify: flags.verify } : {}),
  };
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** One line saying what the policy does. */
export function describeWorkflow(wf: Workflow): string {
  const parts = [
    ...(wf.setup.length ? [`setup ${plural(wf.setup.length, 'command')}`] : []),
    ...(wf.copy.length ? [`copy ${wf.copy.join(' ')}`] : []),
    ...(wf.ports ? [`${plural(wf.ports, 'port')} per leg`] : []),
    ...(wf.verify ? [`verify \`${wf.verify}\`${wf.verifyAttempts ? ` (up to ${plural(wf.verifyAttempts, 'more attempt')})` : ''}`] : []),
    ...(wf.teardown.length ? [`teardown ${plural(wf.teardown.length, 'command')}`] : []),
    ...(wf.prompt ? ['house rules for the prompt'] : []),
    ...(wf.protect.length ? [`protect ${wf.protect.join(' ')}`] : []),
    ...(wf.env.length ? [`env ${wf.env.join(' ')}`] : []),
    ...(wf.networkAllow.length ? [`network allows ${wf.networkAllow.join(' ')}`] : []),
    ...(wf.attempts && wf.attempts > 1 ? [`best of ${wf.attempts} attempts`] : []),
  ];
  return parts.length ? parts.join(', ') : 'nothing set';
}

/** What the agent must leave as the base has it: the workflow file itself, and the file's `protect`. */
export function protectedPaths(wf: Workflow | null | undefined): string[] {
  return [WORKFLOW_FILE, ...(wf?.protect ?? []).filter((g) => g !== WORKFLOW_FILE)];
}
