// The committed completion scripts are what `svc completion` prints now, and bash really loads the
// bash one and completes with it.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, test } from 'vitest';
import { run } from '../../support/cli.js';
import { svcInProcess } from '../../support/svc-in-process.js';

const committed = (name: string) => readFileSync(resolve(import.meta.dirname, '../../../completions', name), 'utf8');

describe('completions', () => {
  test.each([
    ['bash', 'svc.bash'],
    ['zsh', '_svc'],
    ['fish', 'svc.fish'],
  ])('completions/%s is current (regenerate with `npm run completions`)', async (shell, file) => {
    const r = await svcInProcess(['completion', shell]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(committed(file));
  });

  async function complete(...words: string[]): Promise<string[]> {
    return completeWith(process.env, ...words);
  }

  async function completeWith(env: NodeJS.ProcessEnv, ...words: string[]): Promise<string[]> {
    const script = `source ${JSON.stringify(resolve(import.meta.dirname, '../../../completions/svc.bash'))}
COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _svc; printf '%s\\n' "\${COMPREPLY[@]}"`;
    return (await run('bash', ['-c', script], undefined, env)).split('\n').filter(Boolean).sort();
  }

  test('bash completes the values of a flag: agent presets, --on-failure, --format', async () => {
    expect(await complete('svc', 'run', 'PROJ-1', '--agent', '')).toEqual(['aider', 'claude', 'codex', 'gemini', 'opencode']);
    expect(await complete('svc', 'batch', '--on-failure', 'c')).toEqual(['continue']);
    expect(await complete('svc', 'runs', 'report', '--format', '')).toEqual(['html', 'json', 'junit', 'markdown']);
    // --report takes FORMAT:FILE: its formats, not work item keys.
    expect(await complete('svc', 'run', 'PROJ-1', '--report', '')).toEqual(['html:', 'json:', 'junit:', 'markdown:']);
  });

  test('bash completes the keys of svc config set', async () => {
    const keys = await complete('svc', 'config', 'set', '');
    expect(keys).toEqual(expect.arrayContaining(['agent', 'agentUser', 'baseUrl', 'project']));
    expect(await complete('svc', 'config', 'set', 'pa')).toEqual(['parallel']);
  });

  test('bash completes work item keys and run ids by asking svc, as gh completes names', async () => {
    // A stand-in svc on PATH answering as the real one does into a pipe: tab-separated rows.
    const bin = mkdtempSync(join(tmpdir(), 'svc-complete-'));
    writeFileSync(
      join(bin, 'svc'),
      `#!/bin/sh\ncase "$1" in items) printf 'PROJ-1\\ttask\\nPROJ-12\\tbug\\nPROJ-2\\ttask\\n' ;; runs) printf 'run_a\\trun\\nrun_b\\treview\\n' ;; esac\n`,
      { mode: 0o755 },
    );
    const env = { ...process.env, PATH: `${bin}:${process.env.PATH}` };
    expect(await completeWith(env, 'svc', 'run', 'PROJ-1')).toEqual(['PROJ-1', 'PROJ-12']);
    expect(await completeWith(env, 'svc', 'runs', 'show', '')).toEqual(['run_a', 'run_b']);
    expect(await completeWith(env, 'svc', 'continue', 'run_b')).toEqual(['run_b']);
  });

  test('a shell svc has no script for is refused in one line, exit 2', async () => {
    const r = await svcInProcess(['completion', 'powershell']);
    expect([r.code, r.stdout]).toEqual([2, '']);
    expect(r.stderr).toBe("svc: command-argument value 'powershell' is invalid for argument 'shell'. Allowed choices are bash, zsh, fish. (see --help)\n");
  });

  test('bash completes a subcommand', async () => {
    expect(await complete('svc', 'ru')).toEqual(['run', 'run-scope', 'run_scope', 'runs']);
  });

  test('bash completes a nested subcommand after its group', async () => {
    expect(await complete('svc', 'config', 'un')).toEqual(['unset']);
  });

  test('bash completes a flag of the command being typed, global flags included', async () => {
    expect(await complete('svc', 'run', 'PROJ-1', '--agent')).toEqual(['--agent', '--agent-cmd', '--agent-env', '--agent-format', '--agent-user']);
    expect(await complete('svc', 'batch', '--base')).toEqual(['--base-url']);
  });
});
