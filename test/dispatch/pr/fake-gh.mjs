#!/usr/bin/env node
// A stand-in for GitHub's `gh` (see docs/pull-requests.md for why not the real one): records every
// argv and the content of every --body-file to $FAKE_GH_DIR/calls.jsonl, keeps open pull requests
// per head in $FAKE_GH_DIR/pulls.json, and answers the way gh 2.x prints.
import { appendFileSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.env.FAKE_GH_DIR;
const argv = process.argv.slice(2);
const opt = (name) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const bodyFile = opt('--body-file');
appendFileSync(
  join(dir, 'calls.jsonl'),
  JSON.stringify({
    argv,
    body: bodyFile ? readFileSync(bodyFile, 'utf8') : null,
    bodyFile: bodyFile ?? null,
    bodyMode: bodyFile ? (statSync(bodyFile).mode & 0o777).toString(8) : null,
    env: Object.keys(process.env).filter((k) => k.startsWith('SVC_')),
  }) + '\n',
);
const stateFile = join(dir, 'pulls.json');
const pulls = existsSync(stateFile) ? JSON.parse(readFileSync(stateFile, 'utf8')) : {};
const repo = opt('--repo') ?? 'github.com/acme/shop';
const url = (n) => `https://${repo}/pull/${n}`;

const [a, b] = argv;
if (a === 'auth' && b === 'status') process.exit(process.env.FAKE_GH_LOGGED_IN === '1' ? 0 : 1);
if (a === 'pr' && b === 'list') {
  const p = pulls[opt('--head')];
  process.stdout.write(JSON.stringify(p ? [{ number: p, url: url(p) }] : []) + '\n');
} else if (a === 'pr' && b === 'create') {
  const n = Object.keys(pulls).length + 1;
  pulls[opt('--head')] = n;
  writeFileSync(stateFile, JSON.stringify(pulls));
  process.stdout.write(`\nCreating pull request for ${opt('--head')} into ${opt('--base') ?? 'main'} in ${repo}\n\n${url(n)}\n`);
} else if (a === 'pr' && (b === 'edit' || b === 'review')) {
  process.stdout.write(`${url(argv[2])}\n`);
} else if (a === 'pr' && b === 'comment') {
  process.stdout.write(`${url(argv[2])}#issuecomment-1\n`);
} else {
  process.stderr.write(`fake gh: unknown command ${argv.join(' ')}\n`);
  process.exit(1);
}
