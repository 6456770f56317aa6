// The agents' settings that cross into a leg's home (src/dispatch/boundary/settings.ts): what is
// there is copied, links stay links, histories stay behind, a variable that named an original
// names the copy, and what is not there is simply skipped.
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { copyAgentSettings } from '../../../src/dispatch/boundary/settings.js';

function homeWithSettings(): { home: string; codexHome: string } {
  const home = mkdtempSync(join(tmpdir(), 'svc-settings-home-'));
  mkdirSync(join(home, '.claude', 'projects'), { recursive: true });
  writeFileSync(join(home, '.claude', 'settings.json'), '{"model":"x"}');
  writeFileSync(join(home, '.claude', 'projects', 'history.jsonl'), 'old sessions');
  symlinkSync('/nonexistent/target', join(home, '.claude', 'link'));
  writeFileSync(join(home, '.claude.json'), '{}');
  const codexHome = join(home, 'elsewhere', 'codex');
  mkdirSync(join(codexHome, 'sessions'), { recursive: true });
  writeFileSync(join(codexHome, 'auth.json'), '{"token":"t"}');
  return { home, codexHome };
}

describe('copyAgentSettings', () => {
  it('copies what is there, keeps links as links and histories behind, and names the copies', async () => {
    const { home, codexHome } = homeWithSettings();
    const legHome = mkdtempSync(join(tmpdir(), 'svc-settings-leg-'));
    const vars = await copyAgentSettings(home, { CODEX_HOME: codexHome }, legHome);
    expect(vars).toEqual({ CODEX_HOME: join(legHome, '.codex') });
    expect(readFileSync(join(legHome, '.claude', 'settings.json'), 'utf8')).toBe('{"model":"x"}');
    expect(existsSync(join(legHome, '.claude', 'projects'))).toBe(false);
    expect(lstatSync(join(legHome, '.claude', 'link')).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(legHome, '.claude', 'link'))).toBe('/nonexistent/target');
    expect(existsSync(join(legHome, '.claude.json'))).toBe(true);
    expect(readFileSync(join(legHome, '.codex', 'auth.json'), 'utf8')).toBe('{"token":"t"}');
    expect(existsSync(join(legHome, '.codex', 'sessions'))).toBe(false);
    // Nothing of gemini, aider or opencode was there: nothing of theirs is made.
    for (const absent of ['.gemini', '.aider.conf.yml', '.config']) expect(existsSync(join(legHome, absent))).toBe(false);
  });

  it('finds nothing in a home without settings, or without a home', async () => {
    const legHome = mkdtempSync(join(tmpdir(), 'svc-settings-leg-'));
    expect(await copyAgentSettings(mkdtempSync(join(tmpdir(), 'svc-settings-home-')), {}, legHome)).toEqual({});
    expect(await copyAgentSettings(undefined, {}, legHome)).toEqual({});
    expect(await copyAgentSettings('/nonexistent/home', { CODEX_HOME: '/nonexistent/codex' }, legHome)).toEqual({});
  });
});
