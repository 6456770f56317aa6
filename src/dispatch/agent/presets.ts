// `--agent NAME` presets: each agent in its documented headless mode, with its machine-readable
// stream where it has one, auto-approval (nobody is there to answer a prompt), and the prompt on
// stdin where the agent reads it there, so no prompt size limit of argv applies. docs/agents.md
// lists the exact command lines and the sources they were checked against.
import { SvcError } from '../../api/errors.js';
import { expandPlaceholders, splitCommand, type PlaceholderValues } from './argv.js';
import type { AgentCommand, AgentName, PromptVia, StreamFormat } from './types.js';

export interface AgentPreset {
  name: AgentName;
  /** Human name, for messages. */
  title: string;
  /** argv with placeholders; `model` is appended with the agent's own flag when given. */
  argv: readonly string[];
  modelFlag: string;
  promptVia: PromptVia;
  stream: StreamFormat | null;
}

export const AGENT_PRESETS: Readonly<Record<AgentName, AgentPreset>> = {
  // `-p` reads the prompt from stdin; stream-json in print mode requires --verbose.
  claude: {
    name: 'claude',
    title: 'Claude Code',
    argv: ['claude', '-p', '--output-format', 'stream-json', '--verbose', '--permission-mode', 'bypassPermissions'],
    modelFlag: '--model',
    promptVia: 'stdin',
    stream: 'claude-stream-json',
  },
  // PROMPT `-` reads stdin. The workspace-write sandbox cannot commit in a linked worktree (its
  // git dir lies outside the workspace), so the worktree is the isolation and the sandbox is off.
  codex: {
    name: 'codex',
    title: 'Codex',
    argv: ['codex', 'exec', '--json', '--dangerously-bypass-approvals-and-sandbox', '-'],
    modelFlag: '--model',
    promptVia: 'stdin',
    stream: 'codex-json',
  },
  // Headless when stdin is not a TTY; the piped text is the prompt. Gemini CLI trusts no folder
  // it has not seen: in every new svc worktree it would exit 55 and downgrade yolo, so the
  // worktree is trusted for this session (`--skip-trust`, 0.61.0's help).
  gemini: {
    name: 'gemini',
    title: 'Gemini CLI',
    argv: ['gemini', '--output-format', 'stream-json', '--approval-mode', 'yolo', '--skip-trust'],
    modelFlag: '--model',
    promptVia: 'stdin',
    stream: 'gemini-stream-json',
  },
  // `run` appends piped stdin to the message; `--auto` approves permission requests that are not
  // explicitly denied (without it, `run` rejects them).
  opencode: {
    name: 'opencode',
    title: 'opencode',
    argv: ['opencode', 'run', '--format', 'json', '--auto'],
    modelFlag: '--model',
    promptVia: 'stdin',
    stream: 'opencode-json',
  },
  // aider has no machine-readable output: the exit code decides. Its history files go beside the
  // prompt file, not into the worktree, and --no-gitignore keeps it from editing .gitignore, so
  // the worktree holds only the agent's work.
  aider: {
    name: 'aider',
    title: 'aider',
    argv: [
      'aider',
      '--message-file',
      '{prompt_file}',
      '--yes-always',
      '--no-stream',
      '--no-pretty',
      '--no-check-update',
      '--no-show-release-notes',
      '--no-gitignore',
      '--chat-history-file',
      '{prompt_file}.chat-history.md',
      '--input-history-file',
      '{prompt_file}.input-history',
    ],
    modelFlag: '--model',
    promptVia: 'file',
    stream: null,
  },
};

export const AGENT_NAMES = Object.keys(AGENT_PRESETS) as AgentName[];

/** An unknown `--agent`, or both/neither of `--agent` and `--agent-cmd`: a usage error. */
export class AgentChoiceError extends SvcError {
  override readonly name = 'AgentChoiceError';
  readonly kind = 'usage';
}

export function isAgentName(name: string): name is AgentName {
  return Object.hasOwn(AGENT_PRESETS, name);
}

export interface AgentChoice {
  /** `--agent NAME`. */
  agent?: string;
  /** `--agent-cmd "CMD ARGS"`. */
  agentCmd?: string;
  /** `--model`: appended with the preset's flag; for `--agent-cmd` the user writes it in. */
  model?: string;
  /** For `--agent-cmd` wrapping an agent that speaks a known stream format. */
  stream?: StreamFormat;
}

/**
 * The one rule for an agent choice, with its one wording: a preset or a command, not both, and a
 * preset svc knows. The CLI applies it to what the flags, the stored config or a continued run's
 * run.json chose (`required` is false where no agent may do: a dry run, a hosted open, attach;
 * `runNames` is a hosted run's own agent); each leg applies it again to the options it was handed,
 * which need not have come through the CLI. Returns the preset, or null for a command (or none).
 */
export function checkAgentChoice(choice: AgentChoice, required = true, runNames?: string | null): AgentName | null {
  if (choice.agent && choice.agentCmd) throw new AgentChoiceError('pass either --agent or --agent-cmd, not both');
  if (choice.agentCmd !== undefined) return null;
  if (!choice.agent) {
    if (!required) return null;
    const named = runNames ? ` (the run names '${runNames}')` : '';
    throw new AgentChoiceError(`no agent${named}: pass --agent ${AGENT_NAMES.join('|')} or --agent-cmd "CMD ARGS" (or \`svc config set agent NAME\`)`);
  }
  if (!isAgentName(choice.agent)) {
    throw new AgentChoiceError(`unknown agent '${choice.agent}'; presets: ${AGENT_NAMES.join(', ')} (or --agent-cmd "CMD ARGS")`);
  }
  return choice.agent;
}

/**
 * The command line for one leg: the preset's or the split `--agent-cmd`, placeholders substituted
 * per argument. A custom command gets the prompt on stdin as well as in `{prompt_file}` /
 * SVC_PROMPT_FILE, so both kinds of program work unchanged.
 */
export function resolveAgentCommand(choice: AgentChoice, values: PlaceholderValues): AgentCommand {
  const name = checkAgentChoice(choice);
  if (name === null) {
    // A command: a choice of neither was refused above.
    const argv = expandPlaceholders(splitCommand(choice.agentCmd!), values);
    return { agent: 'custom', argv, promptVia: 'stdin', stream: choice.stream ?? null };
  }
  const preset = AGENT_PRESETS[name];
  const argv = [...preset.argv];
  // codex reads `-` as "prompt on stdin": options must come before that positional.
  const positional = argv[argv.length - 1] === '-' ? argv.pop() : undefined;
  if (choice.model) argv.push(preset.modelFlag, choice.model);
  if (positional) argv.push(positional);
  return {
    agent: preset.name,
    argv: expandPlaceholders(argv, values),
    promptVia: preset.promptVia,
    stream: choice.stream ?? preset.stream,
  };
}
