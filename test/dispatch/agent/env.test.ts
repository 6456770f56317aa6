import { describe, expect, it } from 'vitest';
import { agentEnv, agentEnvNameProblem } from '../../../src/dispatch/agent/env.js';

const extra = { SVC_CARD_KEY: 'SVC-1', SVC_RUN_ID: 'r', SVC_PROMPT_FILE: '/p', SVC_WORKDIR: '/w', SVC_BRANCH: 'svc/SVC-1' };

describe('agentEnv: an allowlist (docs/agents.md, the agent environment)', () => {
  it('keeps the basics, drops everything else whatever its name, adds the card variables', () => {
    const env = agentEnv(
      {
        env: {
          PATH: '/bin',
          HOME: '/home/u',
          LANG: 'C.UTF-8',
          LC_ALL: 'C',
          TERM: 'xterm',
          CARGO_HOME: '/usr/local/cargo',
          ANTHROPIC_API_KEY: 'sk-ant-x',
          SVC_TOKEN: 'svc_pat_x',
          SVC_RUN_TOKEN: 'svc_run_x',
          SVC_BASE_URL: 'http://svc',
          GITHUB_TOKEN: 'ghs_x',
          GIT_ASKPASS: '/bin/askpass',
          GIT_CONFIG_COUNT: '1',
          GIT_CONFIG_KEY_0: 'http.extraHeader',
          GIT_CONFIG_VALUE_0: 'Authorization: Bearer x',
          EDITOR: 'vi',
          FOO_SECRET: 'x',
          UNSET: undefined,
        },
      },
      extra,
    );
    expect(env).toEqual({ PATH: '/bin', HOME: '/home/u', LANG: 'C.UTF-8', LC_ALL: 'C', TERM: 'xterm', CARGO_HOME: '/usr/local/cargo', ...extra });
  });

  it("passes a preset's own variables to that preset only", () => {
    const env = { ANTHROPIC_API_KEY: 'a', ANTHROPIC_BASE_URL: 'http://m', OPENAI_API_KEY: 'o', GEMINI_API_KEY: 'g', AWS_SECRET_ACCESS_KEY: 's' };
    expect(agentEnv({ env, agent: { agent: 'claude' } }, extra)).toEqual({ ANTHROPIC_API_KEY: 'a', ANTHROPIC_BASE_URL: 'http://m', ...extra });
    expect(agentEnv({ env, agent: { agent: 'codex' } }, extra)).toEqual({ OPENAI_API_KEY: 'o', ...extra });
    expect(agentEnv({ env, agent: { agent: 'gemini' } }, extra)).toEqual({ GEMINI_API_KEY: 'g', ...extra });
    expect(agentEnv({ env, agent: {} }, extra)).toEqual(extra);
  });

  it('passes what the user names (flag and workflow), never an SVC_* variable', () => {
    const env = { FOO_SECRET: 'f', BAR: 'b', SVC_TOKEN: 'svc_pat_x', OTHER: 'o' };
    expect(agentEnv({ env, agentEnv: ['FOO_SECRET', 'SVC_TOKEN'], workflow: { env: ['BAR'] } }, extra)).toEqual({ FOO_SECRET: 'f', BAR: 'b', ...extra });
    expect(agentEnvNameProblem('SVC_TOKEN')).toMatch(/never reaches an agent/);
    expect(agentEnvNameProblem('svc_run_token')).toMatch(/never reaches an agent/);
    expect(agentEnvNameProblem('A-B')).toMatch(/not a variable name/);
    expect(agentEnvNameProblem('NPM_TOKEN')).toBeNull();
  });

  it('passes a proxy unless its URL carries a password', () => {
    const env = { HTTPS_PROXY: 'http://proxy:3128', http_proxy: 'http://u:secret@proxy:3128', NO_PROXY: 'localhost' };
    expect(agentEnv({ env }, extra)).toEqual({ HTTPS_PROXY: 'http://proxy:3128', NO_PROXY: 'localhost', ...extra });
    expect(agentEnv({ env, agentEnv: ['http_proxy'] }, extra).http_proxy).toBe('http://u:secret@proxy:3128');
  });

  it('the card variables win over inherited ones', () => {
    expect(agentEnv({ env: { SVC_CARD_KEY: 'OTHER-1' } }, extra).SVC_CARD_KEY).toBe('SVC-1');
  });
});
