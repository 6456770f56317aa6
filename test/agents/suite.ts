// The scenarios every real agent goes through. Each asserts what the service stored
// for the leg, svc's exit code and the leg's reason; what differs between agents (the in-stream
// failure each one knows, the exit code it ends with) is passed in, as each CLI showed it.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { COMMIT, KEY, scenario, type AgentHarness, type Outcome } from './harness.js';
import { FAULT_MESSAGE, startMockModel, type Fault, type MockModel } from './mock-model.js';

export interface AgentExpectations {
  /** Whether the agent reports a price (Claude; opencode from its config's model cost). */
  reportsCost: boolean;
  /** The reason of a leg whose model answered HTTP 400. */
  http400Reason: RegExp;
  /** The in-stream failure, the exit code the agent ends with and the reason svc records. */
  inStream: { exitCode: number; reason: RegExp };
  /** The broken stream the agent recovers from. */
  recoversFrom: Fault;
  /** The model name for `--model`, and where it shows in the request. */
  model: { flag: string; seen: string };
  /** Extra checks for what only this agent does. */
  extra?: (mock: () => MockModel) => void;
}

export function agentSuite(h: AgentHarness, x: AgentExpectations): void {
  let mock: MockModel;
  beforeAll(async () => {
    mock = await startMockModel();
  });
  afterAll(async () => {
    await mock?.close();
  });

  const show = (o: Outcome) =>
    `exit ${o.code}, leg ${JSON.stringify(o.leg)}\n${o.stderr.slice(-3000)}\nrequests ${JSON.stringify(o.requests.map((r) => [r.path, r.answered]))}`;

  describe(`${h.agent}: the real CLI through svc run`, () => {
    test('success: one shell call commits on svc/KEY; implemented, tokens recorded', async () => {
      const o = await scenario(h, mock);
      expect(o.code, show(o)).toBe(0);
      expect(o.card).toMatchObject({ disposition: 'implemented', sessionBranch: `svc/${KEY}`, exitCode: 0 });
      expect(o.runStatus).toBe('succeeded');
      expect(o.leg.reason).toBeNull();
      expect(o.branchCommits).toEqual([`${KEY}: done by the mock model`]);
      expect(o.leg.tokens.in, 'tokens in').toBeGreaterThan(0);
      expect(o.leg.tokens.out, 'tokens out').toBeGreaterThan(0);
      if (x.reportsCost) expect(o.leg.costUsd, 'cost').toBeGreaterThan(0);
      else expect(o.leg.costUsd).toBeNull();
      // The model was asked once with the tool and once with its result: the command really ran.
      expect(o.requests.filter((r) => r.main).map((r) => r.answered)).toEqual(['tool-call', 'text']);
      expect(COMMIT).toContain(KEY);
      // As root (CI), through the boundary: a user of svc's pool, never root.
      if (process.getuid?.() === 0) expect(o.ranAs, 'the agent ran as root').not.toBe(0);
      expect(o.ranAs).toEqual(expect.any(Number));
    });

    test("the model answers HTTP 400: failed, with the agent's own message as the reason", async () => {
      const o = await scenario(h, mock, { fault: 'http400' });
      expect(o.code, show(o)).toBe(1);
      expect(o.card.disposition).toBe('failed');
      expect(o.runStatus).toBe('failed');
      expect(o.leg.reason).toMatch(x.http400Reason);
      expect(o.leg.reason).toContain(FAULT_MESSAGE);
      expect(o.branchCommits).toEqual([]);
    });

    test(`an in-stream failure (agent exits ${x.inStream.exitCode}): failed, the terminal event decides`, async () => {
      const o = await scenario(h, mock, { fault: 'in-stream-error' });
      expect(o.code, show(o)).toBe(1);
      expect(o.card).toMatchObject({ disposition: 'failed', exitCode: x.inStream.exitCode });
      expect(o.leg.reason).toMatch(x.inStream.reason);
      expect(o.requests.some((r) => r.answered === 'stream-error')).toBe(true);
    });

    test('HTTP 500 once: the agent retries and the leg is implemented', async () => {
      const o = await scenario(h, mock, { fault: 'http500-once' });
      expect(o.code, show(o)).toBe(0);
      expect(o.card.disposition).toBe('implemented');
      expect(o.requests.filter((r) => r.main).map((r) => r.answered)).toEqual(['http500', 'tool-call', 'text']);
      expect(o.branchCommits).toEqual([`${KEY}: done by the mock model`]);
    });

    test(`a broken stream (${x.recoversFrom}): the agent recovers and the leg is implemented`, async () => {
      const o = await scenario(h, mock, { fault: x.recoversFrom });
      expect(o.code, show(o)).toBe(0);
      expect(o.card.disposition).toBe('implemented');
      expect(o.leg.reason).toBeNull();
      expect(o.requests.filter((r) => r.main).map((r) => r.answered)).toEqual([x.recoversFrom === 'cut-once' ? 'cut' : 'truncated', 'tool-call', 'text']);
      expect(o.branchCommits).toEqual([`${KEY}: done by the mock model`]);
    });

    test('--model M reaches the model request', async () => {
      const o = await scenario(h, mock, { model: x.model.flag });
      expect(o.code, show(o)).toBe(0);
      const main = o.requests.filter((r) => r.main);
      expect(main.length).toBeGreaterThan(0);
      for (const r of main) expect(r.model).toBe(x.model.seen);
    });

    x.extra?.(() => mock);
  });
}
