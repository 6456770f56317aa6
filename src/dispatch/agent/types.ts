// The types the run lifecycle and the agent runner agree on. The lifecycle builds a `LegSpec` per
// card (argv from a preset or `--agent-cmd`, env from `agentEnv`, timeouts from the flags), calls
// `runAgentProcess`, and maps the `LegResult` to a leg disposition; the "no changes" rule (a card that
// expects code but left no commit) is the lifecycle's, with `commitsSince` from ../git/changes.js.
import type { LegNetwork } from '../fence/index.js';

/** How the prompt reaches the agent. The prompt file is always written, whatever the mode. */
export type PromptVia = 'stdin' | 'file' | 'arg';

/** Machine-readable output formats with a parser in ./streams. */
export type StreamFormat = 'claude-stream-json' | 'codex-json' | 'gemini-stream-json' | 'opencode-json';

/** What a stream's terminal event said about the leg. */
export interface StreamVerdict {
  outcome: 'succeeded' | 'failed';
  /** For a failure: `agent reported error: …`. */
  reason: string | null;
}

/** Spend as the agent reported it; absent when the agent did not say. */
export interface StreamUsage {
  tokensIn?: number;
  tokensOut?: number;
  costUsd?: number;
}

/** An incremental parser of an agent's stdout. Never throws on garbled input. */
export interface StreamParser {
  readonly format: StreamFormat;
  /** Feed stdout bytes as they come. */
  push(chunk: Buffer | string): void;
  /** End of stdout: a last line without a newline is parsed now. */
  end(): void;
  /** The terminal event's verdict, or null when no terminal event was seen. */
  verdict(): StreamVerdict | null;
  usage(): StreamUsage;
  /** The agent's final message as its stream carries it (a review's text, a pull request's body), or null. */
  finalMessage(): string | null;
}

/** One agent run over one card. */
export interface LegSpec {
  /** Program and arguments, placeholders already substituted; never run through a shell. */
  argv: string[];
  cwd: string;
  /** The complete child environment (see `agentEnv`): never SVC_TOKEN or SVC_RUN_TOKEN. */
  env: Record<string, string>;
  prompt: string;
  promptVia: PromptVia;
  /** Where the prompt is written (mode 0600) before the agent starts. */
  promptFile: string;
  /**
   * The prompt file is there already: an agent user's leg writes it before its folder is handed
   * over, since root must not write into a folder the agent owns.
   */
  promptWritten?: boolean;
  /** No output on stdout or stderr for this long: the agent is hung. */
  idleTimeoutMs: number;
  /** The leg as a whole may not run longer than this. */
  cardTimeoutMs: number;
  /** Between SIGTERM and SIGKILL to the process group. */
  killGraceMs: number;
  parser?: StreamParser;
  /** Called synchronously for every chunk; must be cheap (append to a log or journal). */
  onOutput(chunk: Buffer, stream: 'stdout' | 'stderr'): void;
  /**
   * Hears the agent's process group start (right after spawn) and end (its leader exited and the
   * group was killed), so the journal can name leftovers after svc itself was killed.
   */
  onGroup?(event: 'start' | 'end', pgid: number): void;
  /** Aborted when the CLI is interrupted: the agent is stopped and the leg ends 'interrupted'. */
  signal?: AbortSignal;
  /** Descriptors 3, 4, … of the agent's process start (an agent user's leg collects itself through them). */
  extraFds?: number[];
  /** Run the agent as this user (svc is root; see ./user.ts and ./pool.ts); absent: as svc's own user. */
  user?: { uid: number; gid: number };
  /** A normal user's fence: hears the listening socket the agent's namespace hands over (fence/bwrap.ts). */
  onHandle?(handle: unknown): void;
}

/** How one leg ended. */
export interface LegResult {
  /** The agent's exit code; null when it died of a signal or never ran. 127: not found. */
  exitCode: number | null;
  /** The signal that ended the agent, e.g. 'SIGTERM'. */
  signal: string | null;
  outcome: 'succeeded' | 'failed';
  /** 'idle timeout', 'card timeout', 'interrupted', 'exit 3', 'killed by SIGKILL',
   * 'agent reported error: …', 'agent not found: <cmd>'; null on success. */
  reason: string | null;
  tokensIn?: number;
  tokensOut?: number;
  costUsd?: number;
  /** Set when a stream parser read the agent's output: its final message (null: none seen). */
  finalMessage?: string | null;
  durationMs: number;
  /** With a workflow (.svc/workflow.yml): the leg's check, and how many times the agent ran. */
  check?: LegCheck;
  attempts?: number;
  /** The commit the check ran on: the one svc collects, whatever the uid did after it. */
  checkedHead?: string;
  /** A fenced leg's network: its mode and what the fence refused (lifecycle/leg-fence.ts). */
  network?: LegNetwork;
}

/** The variables every agent gets besides the filtered base environment (docs/agents.md). */
export interface AgentEnvExtra {
  SVC_CARD_KEY: string;
  SVC_RUN_ID: string;
  SVC_PROMPT_FILE: string;
  SVC_WORKDIR: string;
  SVC_BRANCH: string;
}

/** The agents `--agent NAME` knows. */
export type AgentName = 'claude' | 'codex' | 'gemini' | 'opencode' | 'aider';

/** A launchable agent command: what `resolveAgentCommand` hands to the lifecycle. */
export interface AgentCommand {
  /** The preset name, or 'custom' for `--agent-cmd`. */
  agent: AgentName | 'custom';
  argv: string[];
  promptVia: PromptVia;
  /** The stream format to parse, when the agent speaks one. */
  stream: StreamFormat | null;
}

/** A leg's check as the summary and the report show it. */
export interface LegCheck {
  /** passed or failed: the verify command's verdict on the last attempt; none: no check ran. */
  status: 'passed' | 'failed' | 'none';
  command: string | null;
  exitCode: number | null;
  /** The last lines of the check's output (redacted) when it failed. */
  output: string | null;
}
