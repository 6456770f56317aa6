// `continue RUN_ID` runs the legs again with the options of the original run (docs/hosted.md,
// "continue RUN_ID"): every option run.json records, once it is written and read back, becomes the
// same option again when the user passes no flag, and a flag given now still wins.
import { describe, expect, test } from 'vitest';
import { continueFlags } from '../../../src/commands/dispatch/continue-flags.js';
import type { DispatchFlags } from '../../../src/commands/dispatch/flags.js';
import { dispatchOptions } from '../../../src/commands/dispatch/run-dispatch.js';
import { attemptOptions } from '../../../src/commands/dispatch/run-options.js';
import { readRecordedOptions, recordedOptions } from '../../../src/dispatch/options.js';
import type { Workflow } from '../../../src/dispatch/workflow/policy.js';
import { testContext } from '../../support/context.js';

const ctx = testContext({ cwd: '/work/repo' });
const workflow = { verify: 'npm test' } as Workflow;

/** The options a run of `flags` is given, as run-dispatch.ts settles them before the open. */
function optionsOf(command: 'run' | 'continue', keys: string[], flags: DispatchFlags) {
  const opts = dispatchOptions(command, keys, flags, ctx, () => 'svc_token');
  Object.assign(opts, attemptOptions(flags, opts.agent, workflow));
  opts.workflowFlags = { ...(flags.verify !== undefined ? { verify: flags.verify } : {}), ...(flags.setup !== undefined ? { setup: flags.setup } : {}) };
  return opts;
}

/** run.json's options of a run, through the file: written as JSON, read back. */
const throughRunJson = (flags: DispatchFlags) => JSON.parse(JSON.stringify(recordedOptions(optionsOf('run', ['P-1'], flags), null, 'local')));

// Every flag whose value run.json keeps, none at its default. commander gives `worktree: true`
// for a lone --no-worktree not typed: the continued command line below says so.
const original: DispatchFlags = {
  agentCmd: './agent.sh {prompt_file}',
  agentFormat: 'claude',
  onFailure: 'continue',
  parallel: '3',
  sendLogs: true,
  allowEmpty: true,
  maxCost: '2.5',
  idleTimeout: '2m',
  cardTimeout: '30m',
  killGrace: '3s',
  timeout: '1h',
  verify: 'make check',
  setup: 'npm ci',
  agentEnv: ['NPM_TOKEN'],
  push: true,
  pr: true,
  draft: true,
  attempts: '2',
  allAttempts: true,
  pushAttempts: true,
};

describe('continue RUN_ID', () => {
  // --pr implies --push: the second run pushes without writing pull requests.
  const { pr: _pr, draft: _draft, ...pushOnly } = original;
  test.each([
    ['every flag', original],
    ['--push without --pr', pushOnly],
    ['only an agent', { agent: ['claude'] }],
  ])('%s: each option run.json records comes back as the same option', (_, flags) => {
    const recorded = throughRunJson(flags);
    const continued = optionsOf('continue', ['RUN1'], continueFlags({ worktree: true }, recorded));
    expect(recordedOptions(continued, null, 'local')).toEqual(recordedOptions(optionsOf('run', ['P-1'], flags), null, 'local'));
  });

  test.each<[string, DispatchFlags]>([
    ['--no-push', { push: false, pr: false }],
    ['--parallel 1', { parallel: '1' }],
    ['--idle-timeout 5m', { idleTimeout: '5m' }],
    ['--no-verify', { verify: false }],
    ['--agent claude', { agent: ['claude'] }],
  ])('%s given now wins over the original', (_, given) => {
    const out = continueFlags({ worktree: true, ...given }, throughRunJson(original));
    expect(out).toMatchObject(given);
  });

  test('a run.json option of another shape counts as not recorded', () => {
    expect(readRecordedOptions({ parallel: '3', push: 'yes', timeouts: { idleMs: 'soon' }, agentEnv: ['A', 7], origin: 'elsewhere' })).toEqual({
      agentEnv: ['A'],
    });
    expect(readRecordedOptions(null)).toEqual({});
  });
});
