// Where the fleet examples' validators come from, each the engine's own, from npm packages (no
// network in tests): GitLab's published CI schema (`ci.json`, which gitlab-ci-local bundles to
// validate pipelines the way GitLab does). Pinned exactly in package.json: the schema is found in
// the package's bundle by its `$id`, and a new bundle may lay it out differently.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const GITLAB_SCHEMA_ID = '$id:"https://gitlab.com/.gitlab-ci.yml"';

/** The end of the object literal that starts at `start` (strings skipped, braces balanced). */
function literalEnd(src: string, start: number): number {
  let depth = 0;
  let quote: string | null = null;
  for (let i = start; i < src.length; i++) {
    const c = src[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'" || c === '`') quote = c;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return i + 1;
  }
  throw new Error('gitlab-ci-local: the CI schema literal does not end');
}

/** GitLab's CI JSON schema (draft-07) as gitlab-ci-local ships it. */
export function gitlabCiSchema(): Record<string, unknown> {
  const require = createRequire(import.meta.url);
  const bundle = readFileSync(join(dirname(require.resolve('gitlab-ci-local/package.json')), 'dist', 'index.js'), 'utf8');
  const at = bundle.indexOf(GITLAB_SCHEMA_ID);
  if (at < 0) throw new Error('gitlab-ci-local: no GitLab CI schema in this version');
  const start = bundle.lastIndexOf('{', at);
  // The bundler wrote the JSON as a JS object literal (`!0` for true): it is data, evaluated as such.
  const schema = new Function(`return (${bundle.slice(start, literalEnd(bundle, start))})`)() as Record<string, unknown>;
  if (schema.$id !== 'https://gitlab.com/.gitlab-ci.yml') throw new Error('gitlab-ci-local: not the GitLab CI schema');
  return schema;
}
