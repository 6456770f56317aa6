import { describe, expect, it } from 'vitest';
import { agentEnv, isAgentSafeVariable } from '../../../src/dispatch/agent/env.js';

const extra = { SVC_CARD_KEY: 'SVC-1', SVC_RUN_ID: 'r', SVC_PROMPT_FILE: '/p', SVC_WORKDIR: '/w', SVC_BRANCH: 'svc/SVC-1' };

describe('agentEnv', () => {
  it('drops the service tokens and git tokens, keeps the rest, adds the card variables', () => {
    const env = agentEnv(
      {
        PATH: '/bin',
        HOME: '/home/u',
        ANTHROPIC_API_KEY: 'sk-ant-keep',
        SVC_TOKEN: 'svc_pat_x',
        SVC_RUN_TOKEN: 'svc_run_x',
        SVC_BASE_URL: 'http://svc',
        GITHUB_TOKEN: 'ghs_x',
        GH_TOKEN: 'x',
        GITLAB_TOKEN: 'x',
        GIT_ASKPASS: '/bin/askpass',
        GIT_CONFIG_COUNT: '1',
        GIT_CONFIG_KEY_0: 'http.extraHeader',
        GIT_CONFIG_VALUE_0: 'Authorization: Bearer x',
        GITHUB_APP_PRIVATE_TOKEN: 'x',
        UNSET: undefined,
      },
      extra,
    );
    expect(env).toEqual({ PATH: '/bin', HOME: '/home/u', ANTHROPIC_API_KEY: 'sk-ant-keep', ...extra });
  });

  it('cannot be tricked by case', () => {
    expect(isAgentSafeVariable('svc_token')).toBe(false);
    expect(isAgentSafeVariable('Github_Token')).toBe(false);
    expect(isAgentSafeVariable('EDITOR')).toBe(true);
  });

  it('the card variables win over inherited ones', () => {
    expect(agentEnv({ SVC_CARD_KEY: 'OTHER-1' }, extra).SVC_CARD_KEY).toBe('SVC-1');
  });
});
