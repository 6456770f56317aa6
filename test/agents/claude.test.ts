// Claude Code (@anthropic-ai/claude-code), the real one, with the mock as its Anthropic API.
//
// Root: Claude Code refuses --permission-mode bypassPermissions when run as root, and CI runs as
// root. svc stays root and runs the agent as a user of its pool (docs/agents.md), as every agent of
// this suite does there (harness.ts); Claude is configured by environment only.
import type { AgentHarness } from './harness.js';
import { agentSuite } from './suite.js';

const claude: AgentHarness = {
  agent: 'claude',
  configure(_home, url) {
    return {
      ANTHROPIC_BASE_URL: url,
      ANTHROPIC_API_KEY: 'mock-key',
      // No telemetry, error reports, update checks or other traffic besides the model's.
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_ERROR_REPORTING: '1',
    };
  },
};

agentSuite(claude, {
  reportsCost: true,
  // {"type":"result","subtype":"success","is_error":true,"result":"API Error: 400 …"}, exit 1.
  http400Reason: /^agent reported error: API Error: 400 mock refuses/,
  // An `error` event mid-stream, then a refusal on Claude's non-streaming retry: is_error, exit 1.
  // Claude Code 2.1.330 exits 1 whenever its result has is_error: no in-stream failure seen
  // here ended with exit 0.
  inStream: { exitCode: 1, reason: /^agent reported error: API Error: .*safeguards/ },
  recoversFrom: 'cut-once',
  model: { flag: 'claude-mock-9', seen: 'claude-mock-9' },
});
