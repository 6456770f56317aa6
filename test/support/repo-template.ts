// Git repositories for tests, built once per test file and copied per test: `git init` plus a
// commit is two processes per repository (over a second on a loaded machine), a copy of the
// template's few files is none. A copy is an independent repository with the same one commit on
// main as `makeRepo()` makes (its hash is the template's; nothing may rely on it differing).
import { cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeRepo } from './cli.js';

const templates = new Map<string, Promise<string>>();

/**
 * Builds the template named `name` once per test file (per worker when files are not isolated:
 * a template is never written to, so sharing it is safe) with `build`, then hands out copies. The
 * default is `makeRepo()`'s repository.
 */
export async function copyRepo(name = 'plain', build: () => Promise<string> = makeRepo): Promise<string> {
  let template = templates.get(name);
  if (!template) {
    template = build();
    templates.set(name, template);
  }
  const source = await template;
  const dir = mkdtempSync(join(tmpdir(), 'svc-repo-'));
  cpSync(source, dir, { recursive: true });
  return dir;
}
