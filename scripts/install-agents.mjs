#!/usr/bin/env node
// Installs the real agent CLIs that `npm run test:agents` drives, at pinned versions, into a cache
// folder of their own: they are test tools, not dependencies of svc, and a second call with the
// same pins is a no-op. Prints the folder whose node_modules/.bin holds `claude`, `codex`,
// `gemini` and `opencode`.
//   SVC_AGENTS_CACHE  cache root (default ~/.cache/svc-agents; /var/cache/svc-agents for root, whose
//                     home nobody else may enter: as root an agent runs as an unprivileged user,
//                     which must be able to execute it)
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Bumping a pin installs into a new folder; test/agents asserts against these versions. */
export const AGENT_PINS = {
  '@anthropic-ai/claude-code': '2.1.330',
  '@openai/codex': '0.169.0',
  '@google/gemini-cli': '0.61.0',
  'opencode-ai': '1.18.33',
};

export const AGENT_BINS = ['claude', 'codex', 'gemini', 'opencode'];

export function agentsDir() {
  const root = process.env.SVC_AGENTS_CACHE || (process.getuid?.() === 0 ? '/var/cache/svc-agents' : join(homedir(), '.cache', 'svc-agents'));
  const hash = createHash('sha256').update(JSON.stringify(AGENT_PINS)).digest('hex').slice(0, 12);
  return join(root, hash);
}

function installed(dir) {
  if (!existsSync(join(dir, '.complete'))) return false;
  return AGENT_BINS.every((bin) => existsSync(join(dir, 'node_modules', '.bin', bin)));
}

export function installAgents({ log = (line) => process.stderr.write(`${line}\n`) } = {}) {
  const dir = agentsDir();
  if (installed(dir)) return dir;
  // Install beside the final folder and rename it in: an interrupted install never looks complete.
  const staging = `${dir}.partial-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true, mode: 0o755 });
  chmodSync(staging, 0o755);
  const deps = Object.fromEntries(Object.entries(AGENT_PINS));
  writeFileSync(join(staging, 'package.json'), `${JSON.stringify({ name: 'svc-agents-cache', private: true, dependencies: deps }, null, 2)}\n`);
  log(
    `installing agent CLIs into ${dir}: ${Object.entries(AGENT_PINS)
      .map(([n, v]) => `${n}@${v}`)
      .join(' ')}`,
  );
  // Each CLI's platform binary ships as an optional dependency inside the registry; install
  // scripts stay on, since opencode's postinstall links its binary and refuses to run without it.
  // npm's own report goes to stderr: this script's stdout is the cache folder, one line, which
  // test/agents/setup.ts reads as the path (a cold cache once put npm's "added N packages" there).
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--no-save', '--prefix', staging], {
    stdio: ['ignore', 2, 'inherit'],
    env: { ...process.env, npm_config_update_notifier: 'false' },
  });
  rmSync(dir, { recursive: true, force: true });
  renameSync(staging, dir);
  writeFileSync(join(dir, '.complete'), `${JSON.stringify(AGENT_PINS)}\n`);
  if (!installed(dir)) throw new Error(`agent CLIs missing after install in ${dir}`);
  return dir;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    process.stdout.write(`${installAgents()}\n`);
  } catch (error) {
    process.stderr.write(`install-agents: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}
