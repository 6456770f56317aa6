// Claude Code (@anthropic-ai/claude-code), the real one, with the mock as its Anthropic API.
//
// Root: Claude Code refuses --permission-mode bypassPermissions when run as root, and CI runs as
// root. Until svc runs agents as an unprivileged user itself (--agent-user, DISPATCH.md §3), the
// whole svc process of these scenarios runs as `nobody` (setpriv), so Claude runs unprivileged.
// Once --agent-user exists, svc stays root and hands the agent to that user; the switch is the
// LAUNCH line below:
//   const LAUNCH: Launch = ROOT ? { kind: 'direct', args: ['--agent-user', 'nobody'] } : { kind: 'direct' };
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { scenario, type AgentHarness, type Launch } from './harness.js';
import { agentSuite } from './suite.js';

const ROOT = process.getuid?.() === 0;
const LAUNCH: Launch = ROOT ? { kind: 'svc-as-user', uid: 65534, gid: 65534 } : { kind: 'direct' };

const claude: AgentHarness = {
  agent: 'claude',
  launch: LAUNCH,
  configure(home, url) {
    mkdirSync(join(home, '.claude'), { recursive: true });
    writeFileSync(join(home, '.claude', 'settings.json'), `${JSON.stringify({ autoUpdates: false }, null, 2)}\n`);
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
  // Why LAUNCH exists: as root, the preset's command line is refused before any model request.
  // This one flips once --agent-user lands (svc as root then succeeds): delete it with the switch.
  extra: (mock) => {
    test.runIf(ROOT)('as root without an unprivileged user, Claude Code refuses bypassPermissions', async () => {
      const o = await scenario({ ...claude, launch: { kind: 'direct' } }, mock());
      expect(o.code).toBe(1);
      expect(o.card.disposition).toBe('failed');
      // It says so on stderr only, with no result event: the exit code decides.
      expect(o.leg).toMatchObject({ reason: 'exit 1', exitCode: 1 });
      expect(o.log).toContain('--dangerously-skip-permissions cannot be used with root/sudo privileges');
      expect(o.requests.filter((r) => r.main)).toEqual([]);
    });
  },
});
