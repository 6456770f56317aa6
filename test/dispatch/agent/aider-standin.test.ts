// aider is Python only and cannot be installed where svc is tested (docs/agents.md): its preset's
// command line is checked here with a stand-in `aider` on PATH, through the real `svc run`.
import { readFileSync } from 'node:fs';
import { delimiter, resolve } from 'node:path';
import { expect, test } from 'vitest';
import { isolatedEnv, makeRepo, run, runCli } from '../../support/cli.js';
import { localServerForFile } from '../../support/server-process.js';

const STANDIN = resolve(import.meta.dirname, '../../fixtures/agents/aider-standin');
const server = localServerForFile();

test('svc run --agent aider --model M: the preset command line, prompt in a file, commit on svc/KEY', async () => {
  const repo = await makeRepo();
  const env = isolatedEnv({ SVC_BASE_URL: server.url, SVC_TOKEN: server.token, SVC_PROJECT: 'DEMO', PATH: `${STANDIN}${delimiter}${process.env.PATH}` });
  const r = await runCli(['run', 'DEMO-3', '--agent', 'aider', '--model', 'gpt-mock', '--repo', repo, '--json'], { env });
  expect(r.code, r.stderr).toBe(0);
  expect(await run('git', ['log', '--format=%s', '-1', 'svc/DEMO-3'], repo)).toBe('DEMO-3: aider stand-in\n');
  const common = (await run('git', ['rev-parse', '--git-common-dir'], repo)).trim();
  const argv = readFileSync(resolve(repo, common, 'svc-worktrees', 'aider-argv-DEMO-3.txt'), 'utf8')
    .trim()
    .split('\n');
  const promptFile = argv[argv.indexOf('--message-file') + 1]!;
  expect(argv).toEqual([
    '--message-file',
    promptFile,
    '--yes-always',
    '--no-stream',
    '--no-pretty',
    '--no-check-update',
    '--no-show-release-notes',
    '--no-gitignore',
    '--chat-history-file',
    `${promptFile}.chat-history.md`,
    '--input-history-file',
    `${promptFile}.input-history`,
    '--model',
    'gpt-mock',
  ]);
  // The prompt reached the file aider reads: its title line names the card.
  expect(await run('git', ['show', 'svc/DEMO-3:aider-prompt-title.txt'], repo)).toMatch(/^# DEMO-3: /);
});
