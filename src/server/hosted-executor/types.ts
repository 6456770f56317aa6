// The seam between the hosted executor (index.ts: when to start a runner, what to record, how the
// run is closed when its runner dies) and an engine (how a runner is started and watched).

/** The engines the local service can start runners on (docs/hosted.md). */
export const HOSTED_ENGINES = ['podman', 'docker', 'kubernetes'] as const;
export type HostedEngineName = (typeof HOSTED_ENGINES)[number];

/**
 * The capabilities a runner keeps (all others dropped): what svc as root needs to run each agent as
 * a uid of its own (docs/trust.md): switch to it (SETUID, SETGID), hand the leg's folder over
 * (CHOWN), reach what it made for the leg (DAC_OVERRIDE) and signal the agent's process group
 * (KILL). Measured on Podman: without any one of them a hosted run fails or cannot be stopped;
 * FOWNER was not needed (docs/hosted.md, "The security context"). NET_ADMIN puts each leg's
 * nftables fence up (docs/trust.md, "The network of a leg"): a runner has a network namespace of
 * its own on every engine (local-engine.ts refuses the host's), so the rules are the runner's only.
 */
export const RUNNER_CAPABILITIES = ['CHOWN', 'DAC_OVERRIDE', 'KILL', 'NET_ADMIN', 'SETGID', 'SETUID'] as const;

/** One runner to start: the image running `svc attach` for one hosted run. */
export interface RunnerSpec {
  runId: string;
  /** The container's or Job's name, derived from the run id. */
  name: string;
  image: string;
  /** SVC_BASE_URL as the runner must reach the service. */
  baseUrl: string;
  /** The arguments after the image's `svc` entry point: `attach`, and `--agent-cmd CMD` when given. */
  args: string[];
  /** The run's deadline: the runner is stopped and the run closed `timed_out` after it. */
  timeoutMs: number;
}

/** How a runner ended. */
export interface RunnerExit {
  /** The runner's exit code; null when it never ran or the engine does not say. */
  exitCode: number | null;
  /** The engine's own one-line error, when the runner could not start or run. */
  error: string | null;
  /** Ended by its deadline. */
  timedOut: boolean;
}

export interface RunnerHandle {
  exited: Promise<RunnerExit>;
  /** Stops the runner (SIGTERM, then SIGKILL after the engine's grace period). */
  stop(): Promise<void>;
}

export interface HostedEngine {
  readonly name: HostedEngineName;
  /** The container or Job name for a run. */
  runnerName(runId: string): string;
  /** Checks that the engine answers and can run the image; throws HostedEngineError otherwise. */
  preflight(image: string): Promise<void>;
  /** What would be started (`--dry-run`): a command line or YAML manifests, with no credential. */
  describe(spec: RunnerSpec): string;
  /** Starts the runner with the run's credential (never in an argument, a label or a plain value). */
  start(spec: RunnerSpec, credential: string, logFile: string): Promise<RunnerHandle>;
}

/** An engine that is missing or refused: the message is one line naming the engine's own error. */
export class HostedEngineError extends Error {
  override readonly name = 'HostedEngineError';
}

/** The last non-empty line of an engine's output, the one that names its error. */
export function lastLine(text: string): string {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  return (lines.at(-1) ?? '').slice(0, 500);
}
