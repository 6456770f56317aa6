// .svc/workflow.yml as parsed and checked (src/dispatch/workflow/policy.ts): a good file becomes the
// policy, each mistake is one line with the line it is on, and the flags go over the file.
import { describe, expect, test } from 'vitest';
import { parseWorkflow } from '../../../src/dispatch/workflow/parse.js';
import { applyWorkflowFlags, DEFAULT_STEP_TIMEOUTS } from '../../../src/dispatch/workflow/policy.js';

describe('parseWorkflow', () => {
  test('a whole file', () => {
    const source = [
      '# house workflow',
      'setup:',
      '  - npm ci',
      '  - npm run build',
      'copy: .env*',
      'ports: 2',
      'verify: npm test',
      'verify_attempts: 2',
      'teardown: pkill -f vite || true',
      'prompt: |',
      '  Use pnpm.',
      'timeouts:',
      '  verify: 90s',
      'env: [NPM_TOKEN, PLAYWRIGHT_BROWSERS_PATH]',
      'network:',
      '  allow: [registry.npmjs.org, "*.example.com:443"]',
    ].join('\n');
    expect(parseWorkflow(source)).toEqual({
      problems: [],
      workflow: {
        setup: ['npm ci', 'npm run build'],
        copy: ['.env*'],
        ports: 2,
        verify: 'npm test',
        verifyAttempts: 2,
        teardown: ['pkill -f vite || true'],
        prompt: 'Use pnpm.\n',
        protect: [],
        env: ['NPM_TOKEN', 'PLAYWRIGHT_BROWSERS_PATH'],
        networkAllow: ['registry.npmjs.org', '*.example.com:443'],
        timeouts: { ...DEFAULT_STEP_TIMEOUTS, verify: 90_000 },
      },
    });
  });

  test.each([
    ['an empty file', ''],
    ['only comments', '# nothing yet\n'],
  ])('%s is a policy that does nothing', (_name, source) => {
    expect(parseWorkflow(source)).toMatchObject({ problems: [], workflow: { setup: [], verify: null, ports: 0 } });
  });

  test.each([
    ['an unknown key', 'setup: npm ci\nverfy: npm test\n', 2, "unknown key 'verfy'"],
    ['ports not a number', 'ports: many\n', 1, 'ports must be a whole number from 1 to 100, not "many"'],
    ['ports out of range', '\nports: 0\n', 2, 'ports must be a whole number from 1 to 100, not 0'],
    ['verify_attempts negative', 'verify_attempts: -1\n', 1, 'verify_attempts must be a whole number from 0 to 10'],
    ['verify a list', 'verify:\n  - a\n', 2, 'verify must be a string (a shell command)'],
    ['a key with no value', 'setup:\n', 1, 'setup has no value'],
    ['a setup entry not a string', 'setup:\n  - npm ci\n  - {a: 1}\n', 3, 'each entry of setup must be a non-empty string'],
    ['an absolute glob', 'copy: [/etc/passwd]\n', 1, "copy: '/etc/passwd' is absolute"],
    ['a glob out of the checkout', 'copy:\n  - ../secrets/.env\n', 2, "copy: '../secrets/.env' leaves the checkout"],
    ['a bad duration', 'timeouts:\n  setup: soon\n', 2, 'timeouts.setup must be a duration like 90s, 10m or 1h, not "soon"'],
    ['an unknown timeout', 'timeouts:\n  agent: 1m\n', 2, 'unknown key timeouts.agent'],
    ['not a map', '- npm ci\n', 1, 'the file must be a map of keys'],
    ['a duplicate key', 'verify: a\nverify: b\n', 2, 'Map keys must be unique'],
    ['broken YAML (the line of the bracket left open)', 'setup: [npm ci\n', 1, ''],
    ['network not a map', 'network: open\n', 1, 'network must be a map with one key, allow'],
    ['network with another key', 'network:\n  allow: [a.test]\n  deny: [b.test]\n', 3, 'network must be a map with one key, allow'],
    ['a bad host to allow', 'network:\n  allow: ["http://a.test/"]\n', 2, 'network.allow: not a host to allow: "http://a.test/"'],
  ])('%s: one line naming its line', (_name, source, line, message) => {
    const { workflow, problems } = parseWorkflow(source);
    expect(workflow).toBeNull();
    expect(problems[0]).toMatchObject({ line });
    expect(problems[0]!.message).toContain(message);
    for (const p of problems) expect(p.message).not.toContain('\n');
  });

  test('every mistake is listed, each on its line', () => {
    const { problems } = parseWorkflow('ports: x\nverify: 3\nnope: 1\n');
    expect(problems.map((p) => p.line)).toEqual([1, 2, 3]);
  });
});

describe('applyWorkflowFlags', () => {
  const file = parseWorkflow('setup: npm ci\nverify: npm test\nverify_attempts: 2\n').workflow!;
  test.each([
    ['no flags: the file', {}, { setup: ['npm ci'], verify: 'npm test', verifyAttempts: 2 }],
    ['--no-verify', { verify: false as const }, { setup: ['npm ci'], verify: null, verifyAttempts: 0 }],
    ['--verify CMD', { verify: 'make check' }, { verify: 'make check', verifyAttempts: 2 }],
    ['--setup CMD', { setup: 'pnpm i' }, { setup: ['pnpm i'], verify: 'npm test' }],
  ])('%s', (_name, flags, expected) => {
    expect(applyWorkflowFlags(file, flags)).toMatchObject(expected);
  });

  test('without a file, flags alone make a policy; nothing at all makes none', () => {
    expect(applyWorkflowFlags(null, { verify: 'npm test' })).toMatchObject({ verify: 'npm test', setup: [], ports: 0 });
    expect(applyWorkflowFlags(null, {})).toBeNull();
  });
});

describe('a flow collection left open', () => {
  test.each([
    ['[\n', 1],
    ['verify: [npm test\nports: 2\n', 1],
    ['setup: npm ci\ncopy: [".env", "a]b"\nports: 2\n', 2],
    ['prompt: "use [brackets"\nenv: {A: 1\n', 2],
  ])('%j is reported on the line of its opening bracket (%i)', (source, line) => {
    const { workflow, problems } = parseWorkflow(source);
    expect(workflow).toBeNull();
    expect(problems[0]?.line).toBe(line);
  });
});

describe('attempts (best of N)', () => {
  test('a whole number from 1 to 8, and only with a check to pick the winner', () => {
    expect(parseWorkflow('verify: npm test\nattempts: 3\n').workflow).toMatchObject({ verify: 'npm test', attempts: 3 });
    expect(parseWorkflow('attempts: 1\n').workflow).toMatchObject({ attempts: 1 });
    expect(parseWorkflow('verify: npm test\nattempts: 9\n').problems).toEqual([{ line: 2, message: 'attempts must be a whole number from 1 to 8, not 9' }]);
    expect(parseWorkflow('setup: npm ci\nattempts: 2\n').problems).toEqual([
      { line: 2, message: 'attempts needs verify: the check picks the winning attempt' },
    ]);
  });
});
