// The settings file (src/commands/config/store.ts) as users meet it: the same file conf kept, left
// whole however a write goes, and a damaged file is one line and exit 2, never a stack trace.
import { mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { isolatedEnv } from '../../support/cli.js';
import { svcInProcess } from '../../support/svc-in-process.js';

describe('the settings file', () => {
  test('without SVC_CONFIG_DIR it lives in $XDG_CONFIG_HOME/svc/config.json, where conf kept it', async () => {
    const env = isolatedEnv();
    delete env.SVC_CONFIG_DIR;
    env.XDG_CONFIG_HOME = join(env.HOME!, 'xdg');
    mkdirSync(join(env.XDG_CONFIG_HOME, 'svc'), { recursive: true });
    // A file as conf wrote it (tab-indented), from before conf was dropped.
    writeFileSync(join(env.XDG_CONFIG_HOME, 'svc', 'config.json'), '{\n\t"project": "OLD"\n}');
    const got = await svcInProcess(['config', 'get', 'project'], { env });
    expect(got.code, got.stderr).toBe(0);
    expect(got.stdout.trim()).toBe('OLD');
    expect((await svcInProcess(['config', 'set', 'agent', 'claude'], { env })).code).toBe(0);
    const file = join(env.XDG_CONFIG_HOME, 'svc', 'config.json');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ project: 'OLD', agent: 'claude' });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // The write went through a sibling file renamed over: nothing else is left in the folder.
    expect(readdirSync(join(env.XDG_CONFIG_HOME, 'svc'))).toEqual(['config.json']);
  });

  test.each([['{ "project": '], ['[1, 2]'], ['"text"']])('a damaged file (%s) is one line, exit 2, and is left as it was', async (text) => {
    const env = isolatedEnv();
    mkdirSync(env.SVC_CONFIG_DIR!, { recursive: true });
    const file = join(env.SVC_CONFIG_DIR!, 'config.json');
    writeFileSync(file, text);
    for (const args of [
      ['config', 'get', 'project'],
      ['config', 'set', 'project', 'NEW'],
    ]) {
      const r = await svcInProcess(args, { env });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/^svc: .*config\.json is not a JSON object: fix it, or remove it and log in again\n$/);
    }
    expect(readFileSync(file, 'utf8')).toBe(text);
  });
});
