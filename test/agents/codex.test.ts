// Codex CLI (@openai/codex), the real one, with the mock as a custom Responses-API provider.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { agentSuite } from './suite.js';

agentSuite(
  {
    agent: 'codex',
    configure(home, url) {
      const codexHome = join(home, '.codex');
      // Retries kept small so a broken stream recovers fast; no update check, no analytics.
      const config = [
        'model = "mock-model"',
        'model_provider = "mock"',
        'check_for_update_on_startup = false',
        '',
        '[model_providers.mock]',
        'name = "mock"',
        `base_url = "${url}/v1"`,
        'wire_api = "responses"',
        'env_key = "OPENAI_API_KEY"',
        'request_max_retries = 2',
        'stream_max_retries = 2',
        'stream_idle_timeout_ms = 10000',
        '',
        '[analytics]',
        'enabled = false',
        '',
      ].join('\n');
      mkdirSync(codexHome, { recursive: true });
      writeFileSync(join(codexHome, 'config.toml'), config);
      return { CODEX_HOME: codexHome, OPENAI_API_KEY: 'mock-key' };
    },
  },
  {
    reportsCost: false,
    // Codex passes the provider's JSON error body on as its message; svc reads the inner message.
    http400Reason: /^agent reported error: mock refuses/,
    // response.failed: Codex prints `error` then `turn.failed` and exits 1.
    inStream: { exitCode: 1, reason: /^agent reported error: mock refuses/ },
    // Prints {"type":"error","message":"Reconnecting... 1/2 …"}, then recovers: turn.completed.
    recoversFrom: 'cut-once',
    model: { flag: 'mock-other', seen: 'mock-other' },
  },
);
