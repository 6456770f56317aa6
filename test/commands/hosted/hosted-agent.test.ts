// Inside a hosted run the agent is chosen once, as soon as the run is read (agentChoice, from the
// flags, the run's preset or the stored choice): a choice that cannot work is one usage line,
// exit 2, before any repository is cloned; no agent at all makes `svc attach` show its plan.
import { existsSync } from 'node:fs';
import { afterEach, describe, expect, test } from 'vitest';
import { hostedFixture, type HostedFixture } from '../../support/hosted.js';
import { svcInProcess } from '../../support/svc-in-process.js';

let fixture: HostedFixture | undefined;
afterEach(async () => {
  await fixture?.svc.close();
  fixture = undefined;
});

describe('the agent of a hosted run', () => {
  test.each([
    ['both --agent and --agent-cmd (attach)', ['attach', '--agent', 'claude', '--agent-cmd', 'true'], /^svc: pass either --agent or --agent-cmd, not both\n$/],
    ['an unknown preset (attach)', ['attach', '--agent', 'clippy'], /^svc: unknown agent 'clippy'; presets: /],
    ['no agent at all (a dispatch command)', ['run', 'X-1'], /^svc: no agent: pass --agent /],
    [
      '--agent-format without --agent-cmd (a dispatch command)',
      ['run', 'X-1', '--agent', 'claude', '--agent-format', 'claude'],
      /^svc: --agent-format describes an --agent-cmd/,
    ],
  ])('%s: one line, exit 2, nothing cloned', async (_name, args, message) => {
    const f = (fixture = await hostedFixture());
    const r = await svcInProcess([...args, '--repo', f.workspaceDir], { env: f.env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(existsSync(f.workspaceDir)).toBe(false);
  });

  test('svc attach with no agent anywhere shows the plan instead, and clones nothing', async () => {
    const f = (fixture = await hostedFixture());
    const r = await svcInProcess(['attach', '--repo', f.workspaceDir], { env: f.env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`no agent to execute run ${f.runId} with: showing its plan`);
    expect(r.stdout).toContain(`run ${f.runId}: run (hosted,`);
    expect(existsSync(f.workspaceDir)).toBe(false);
  });
});
