// globalSetup of `npm run test:agents`: the real agent CLIs, installed once per pin set (a warm
// cache makes this a no-op), and the built svc the scenarios spawn.
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';

export default function setup(): void {
  const root = resolve(import.meta.dirname, '../..');
  const dir = execFileSync(process.execPath, [resolve(root, 'scripts/install-agents.mjs')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
  process.env.SVC_AGENTS_DIR = dir;
}
