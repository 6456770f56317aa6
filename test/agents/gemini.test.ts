// Gemini CLI (@google/gemini-cli), the real one, with the mock as its Gemini API endpoint.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { KEY, scenario } from './harness.js';
import { agentSuite } from './suite.js';

const gemini = {
  agent: 'gemini' as const,
  configure(home: string, url: string) {
    mkdirSync(join(home, '.gemini'), { recursive: true });
    // API-key auth (no Google login), no update check, no usage statistics, no telemetry.
    const settings = {
      security: { auth: { selectedType: 'gemini-api-key' } },
      general: { disableAutoUpdate: true, disableUpdateNag: true },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
    };
    writeFileSync(join(home, '.gemini', 'settings.json'), `${JSON.stringify(settings, null, 2)}\n`);
    return { GEMINI_API_KEY: 'mock-key', GOOGLE_GEMINI_BASE_URL: url };
  },
};

agentSuite(gemini, {
  reportsCost: false,
  // {"type":"result","status":"error","error":{"message":"[API Error: {…json…}]"}}, exit 144.
  http400Reason: /^agent reported error: \[API Error: mock refuses/,
  // A stream that ends without a finish reason, four times: an `error` event with the message,
  // then a bare {"status":"error"} result, and exit 0.
  inStream: { exitCode: 0, reason: /^agent reported error: Model stream ended without a finish reason\.$/ },
  // Gemini retries a stream that ended early, not one whose connection dropped (below).
  recoversFrom: 'truncate-once',
  model: { flag: 'gemini-mock-pro', seen: 'gemini-mock-pro' },
  extra: (mock) => {
    test('a dropped connection mid-stream is not retried by Gemini CLI 0.61: failed, "terminated"', async () => {
      const o = await scenario(gemini, mock(), { fault: 'cut-once' });
      expect(o.code).toBe(1);
      expect(o.card).toMatchObject({ workItemKey: KEY, disposition: 'failed', exitCode: 1 });
      expect(o.leg.reason).toBe('agent reported error: [API Error: terminated]');
    });
  },
});
