// opencode (opencode-ai), the real one, with the mock as an OpenAI-compatible provider.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { agentSuite } from './suite.js';

agentSuite(
  {
    agent: 'opencode',
    configure(home, url) {
      const file = join(home, 'opencode.json');
      // A price per million tokens, so opencode reports a cost the leg must record.
      const model = { name: 'Mock model', cost: { input: 3, output: 15 } };
      const config = {
        provider: {
          mock: {
            npm: '@ai-sdk/openai-compatible',
            name: 'Mock',
            options: { baseURL: `${url}/v1`, apiKey: 'mock-key' },
            models: { 'mock-model': model, 'other-model': { ...model, name: 'Other mock model' } },
          },
        },
        model: 'mock/mock-model',
        small_model: 'mock/mock-model',
        autoupdate: false,
        share: 'disabled',
      };
      writeFileSync(file, `${JSON.stringify(config, null, 2)}\n`);
      return {
        OPENCODE_CONFIG: file,
        OPENCODE_DISABLE_AUTOUPDATE: '1',
        OPENCODE_DISABLE_MODELS_FETCH: '1',
        OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
      };
    },
  },
  {
    reportsCost: true,
    // {"type":"error","error":{"name":"APIError","data":{"message":"…","statusCode":400}}}, exit 1.
    http400Reason: /^agent reported error: mock refuses/,
    // An error chunk in the SSE stream: an `error` event (UnknownError, the body as JSON), exit 1.
    inStream: { exitCode: 1, reason: /^agent reported error: mock refuses/ },
    recoversFrom: 'cut-once',
    model: { flag: 'mock/other-model', seen: 'other-model' },
  },
);
