// The committed completion scripts are what `svc completion` prints now, and bash really loads the
// bash one and completes with it.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, test } from 'vitest';
import { run } from '../support/cli.js';
import { svcInProcess } from '../support/svc-in-process.js';

const committed = (name: string) => readFileSync(resolve(import.meta.dirname, '../../completions', name), 'utf8');

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
    const script = `source ${JSON.stringify(resolve(import.meta.dirname, '../../completions/svc.bash'))}
COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _svc; printf '%s\\n' "\${COMPREPLY[@]}"`;
    return (await run('bash', ['-c', script])).split('\n').filter(Boolean).sort();
  }

  test('bash completes a subcommand', async () => {
    expect(await complete('svc', 'ru')).toEqual(['run', 'run-scope', 'run_scope', 'runs']);
  });

  test('bash completes a nested subcommand after its group', async () => {
    expect(await complete('svc', 'config', 'un')).toEqual(['unset']);
  });

  test('bash completes a flag of the command being typed, global flags included', async () => {
    expect(await complete('svc', 'run', 'PROJ-1', '--agent')).toEqual(['--agent', '--agent-cmd', '--agent-format', '--agent-user']);
    expect(await complete('svc', 'batch', '--base')).toEqual(['--base-url']);
  });
});
