#!/usr/bin/env node
// A scripted stand-in for a coding agent, used by `svc demo`: it reads the prompt svc wrote for the
// card, "works" for a moment, writes a note and commits it on the card's branch with a message that
// starts with the key, as DISPATCH.md asks of every agent.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const key = process.env.SVC_CARD_KEY;
const workdir = process.env.SVC_WORKDIR ?? process.cwd();
const promptFile = process.argv[2] ?? process.env.SVC_PROMPT_FILE;
if (!key || !promptFile) {
  console.error('demo-agent: SVC_CARD_KEY and a prompt file are required');
  process.exit(2);
}

const prompt = readFileSync(promptFile, 'utf8');
const title = /^# (.+)$/m.exec(prompt)?.[1] ?? key;
console.log(`demo-agent: read ${prompt.length} characters of prompt for ${key}`);
for (const step of ['reading the card', 'planning the change', 'writing the change']) {
  console.log(`demo-agent: ${step}…`);
  await sleep(150);
}

mkdirSync(join(workdir, 'notes'), { recursive: true });
writeFileSync(join(workdir, 'notes', `${key}.md`), `# ${title}\n\nDone by the demo agent.\n`);
const git = (...args) => execFileSync('git', args, { cwd: workdir, stdio: ['ignore', 'pipe', 'inherit'] });
git('add', '-A');
// The demo's throwaway repository: neither the user's signing key nor their global hooks apply.
git('-c', 'user.name=demo-agent', '-c', 'user.email=demo-agent@example.invalid', '-c', 'commit.gpgsign=false', 'commit', '-q', '--no-verify', '-m', `${key}: ${title}`);
console.log(`demo-agent: committed ${key} on ${process.env.SVC_BRANCH ?? 'the current branch'}`);
