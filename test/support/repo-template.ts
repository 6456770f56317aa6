// Git repositories for tests (makeRepo()'s plain one in test/support/cli.ts, and templates with
// more commits), built once per worker and copied per test: building one costs several git
// processes (over a second on a loaded machine), a copy of its few files none. A copy is an
// independent repository with the template's commits (its hashes are the template's; nothing may
// rely on them differing).
import { cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const templates = new Map<string, Promise<string>>();

/**
 * Builds the template named `name` once per test file (per worker when files are not isolated:
 * a template is never written to, so sharing it is safe) with `build`, then hands out copies.
 */
export async function copyRepo(name: string, build: () => Promise<string>): Promise<string> {
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
