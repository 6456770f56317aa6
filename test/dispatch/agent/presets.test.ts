import { describe, expect, it } from 'vitest';
import { AGENT_NAMES, AgentChoiceError, checkAgentChoice, resolveAgentCommand } from '../../../src/dispatch/agent/presets.js';
import { parserFor } from '../../../src/dispatch/agent/streams/index.js';
import { ArgvError } from '../../../src/dispatch/agent/argv.js';

const values = { prompt_file: '/state/run-1/SVC-1.prompt.md', key: 'SVC-1', workdir: '/wt/SVC-1', branch: 'svc/SVC-1', run_id: 'run-1' };

describe('agent presets', () => {
  it.each([
    [
      'claude',
      ['claude', '-p', '--output-format', 'stream-json', '--verbose', '--permission-mode', 'bypassPermissions', '--model', 'M'],
      'stdin',
      'claude-stream-json',
    ],
    ['codex', ['codex', 'exec', '--json', '--dangerously-bypass-approvals-and-sandbox', '--model', 'M', '-'], 'stdin', 'codex-json'],
    ['gemini', ['gemini', '--output-format', 'stream-json', '--approval-mode', 'yolo', '--skip-trust', '--model', 'M'], 'stdin', 'gemini-stream-json'],
    ['opencode', ['opencode', 'run', '--format', 'json', '--auto', '--model', 'M'], 'stdin', 'opencode-json'],
    [
      'aider',
      [
        'aider',
        '--message-file',
        '/state/run-1/SVC-1.prompt.md',
        '--yes-always',
        '--no-stream',
        '--no-pretty',
        '--no-check-update',
        '--no-show-release-notes',
        '--no-gitignore',
        '--chat-history-file',
        '/state/run-1/SVC-1.prompt.md.chat-history.md',
        '--input-history-file',
        '/state/run-1/SVC-1.prompt.md.input-history',
        '--model',
        'M',
      ],
      'file',
      null,
    ],
  ] as const)('%s: exact command line with --model', (agent, argv, promptVia, stream) => {
    const command = resolveAgentCommand({ agent, model: 'M' }, values);
    expect(command).toEqual({ agent, argv, promptVia, stream });
    expect(parserFor(command)?.format ?? null).toBe(stream);
  });

  it('adds no model flag without --model', () => {
    expect(resolveAgentCommand({ agent: 'codex' }, values).argv).toEqual(['codex', 'exec', '--json', '--dangerously-bypass-approvals-and-sandbox', '-']);
  });

  it('covers the five agents of docs/agents.md', () => {
    expect([...AGENT_NAMES].sort()).toEqual(['aider', 'claude', 'codex', 'gemini', 'opencode']);
  });

  it('splits --agent-cmd without a shell and substitutes placeholders per argument', () => {
    const command = resolveAgentCommand(
      { agentCmd: `my-agent --prompt-file {prompt_file} --title "card {key}" --cd {workdir} --ref '{branch}' {run_id}` },
      { ...values, key: 'SVC-1; rm -rf ~' },
    );
    expect(command).toEqual({
      agent: 'custom',
      argv: ['my-agent', '--prompt-file', values.prompt_file, '--title', 'card SVC-1; rm -rf ~', '--cd', '/wt/SVC-1', '--ref', 'svc/SVC-1', 'run-1'],
      promptVia: 'stdin',
      stream: null,
    });
  });

  it('lets --agent-cmd declare a known stream format', () => {
    const command = resolveAgentCommand({ agentCmd: 'wrap-claude', stream: 'claude-stream-json' }, values);
    expect(parserFor(command)?.format).toBe('claude-stream-json');
  });

  it.each([
    [{ agent: 'cursor' }, AgentChoiceError],
    [{}, AgentChoiceError],
    [{ agent: 'claude', agentCmd: 'x' }, AgentChoiceError],
    [{ agentCmd: '"unterminated' }, ArgvError],
    [{ agent: 'constructor' }, AgentChoiceError],
  ])('rejects %j as a usage error', (choice, type) => {
    expect(() => resolveAgentCommand(choice, values)).toThrow(type);
  });

  // The CLI (agentChoice) and a leg apply the same rule: a run.json from another build that names
  // both, or an unknown preset, is refused at leg time in the CLI's words.
  it.each([
    [{ agent: 'claude', agentCmd: 'x' }, /^pass either --agent or --agent-cmd, not both$/],
    [{ agent: 'cursor' }, /^unknown agent 'cursor'; presets: claude, codex, gemini, opencode, aider \(or --agent-cmd "CMD ARGS"\)$/],
    [{}, /^no agent: pass --agent claude\|codex\|gemini\|opencode\|aider or --agent-cmd "CMD ARGS"/],
  ])('refuses %j at leg time with the words the CLI uses', (choice, message) => {
    expect(() => resolveAgentCommand(choice, values)).toThrow(message);
    expect(() => checkAgentChoice(choice)).toThrow(message);
  });

  it("lets no agent through only where none is required, and names a hosted run's own", () => {
    expect(checkAgentChoice({}, false)).toBeNull();
    expect(checkAgentChoice({ agentCmd: 'my-agent' })).toBeNull();
    expect(checkAgentChoice({ agent: 'codex' })).toBe('codex');
    expect(() => checkAgentChoice({}, true, 'custom')).toThrow(/^no agent \(the run names 'custom'\): pass --agent /);
  });
});
