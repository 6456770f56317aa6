import { describe, expect, it } from 'vitest';
import { ArgvError, expandPlaceholders, splitCommand } from '../../../src/dispatch/agent/argv.js';

describe('splitCommand', () => {
  it.each([
    ['my-agent run', ['my-agent', 'run']],
    ['  spaced   out\targs\n', ['spaced', 'out', 'args']],
    [`agent 'single quoted arg'`, ['agent', 'single quoted arg']],
    [`agent "double quoted arg"`, ['agent', 'double quoted arg']],
    [`agent --msg="a b" x`, ['agent', '--msg=a b', 'x']],
    [`agent 'it'"'"'s'`, ['agent', "it's"]],
    [`agent "say \\"hi\\""`, ['agent', 'say "hi"']],
    [`agent "back\\\\slash" "keep \\n as is"`, ['agent', 'back\\slash', 'keep \\n as is']],
    [`agent a\\ b`, ['agent', 'a b']],
    [`agent '' ""`, ['agent', '', '']],
    [`agent '$HOME' "$HOME" $(rm -rf /) \`x\``, ['agent', '$HOME', '$HOME', '$(rm', '-rf', '/)', '`x`']],
    [`agent 'a|b' ; c && d`, ['agent', 'a|b', ';', 'c', '&&', 'd']],
    [`agent --prompt-file {prompt_file}`, ['agent', '--prompt-file', '{prompt_file}']],
    ['agent \\\nnext', ['agent', 'next']],
  ])('%j → %j', (line, words) => {
    expect(splitCommand(line)).toEqual(words);
  });

  it.each([`agent 'open`, `agent "open`, 'agent \\', '', '   '])('rejects %j as a usage error', (line) => {
    expect(() => splitCommand(line)).toThrow(ArgvError);
    try {
      splitCommand(line);
    } catch (error) {
      expect((error as ArgvError).exitCode).toBe(2);
    }
  });
});

describe('expandPlaceholders', () => {
  const values = { prompt_file: '/s/p.md', key: 'SVC-7', workdir: '/w t', branch: 'svc/SVC-7', run_id: 'r1' };

  it('substitutes inside each argument without splitting or re-expanding', () => {
    expect(expandPlaceholders(['agent', '--file={prompt_file}', '{workdir}', '{key}@{branch}', '{run_id}', '{other}'], values)).toEqual([
      'agent',
      '--file=/s/p.md',
      '/w t',
      'SVC-7@svc/SVC-7',
      'r1',
      '{other}',
    ]);
    expect(expandPlaceholders(['{key}'], { ...values, key: '{branch} $(x)' })).toEqual(['{branch} $(x)']);
  });

  it('leaves {prompt} alone unless a prompt is given', () => {
    expect(expandPlaceholders(['{prompt}'], values)).toEqual(['{prompt}']);
    expect(expandPlaceholders(['-p', '{prompt}'], { ...values, prompt: 'do it; rm -rf /' })).toEqual(['-p', 'do it; rm -rf /']);
  });
});
