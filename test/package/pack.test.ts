// The package as a user gets it: `npm pack` (of the built tree), then `npm install <tarball>` into an
// empty folder, then the installed `svc` runs. dist/ bundles every library svc uses, so the install
// must bring nothing else: a runtime dependency the bundle does not load only costs users. Slow on purpose and
// given a generous timeout; `npm test` builds first, so dist/ is current.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { isolatedEnv } from '../support/cli.js';

const ROOT = resolve(import.meta.dirname, '../..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string; bin: Record<string, string> };

/** The test runner's environment without what `npm run`/`npx` put in it for their own child. */
function npmEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^npm_/i.test(k) && k !== 'INIT_CWD') env[k] = v;
  return env;
}

function exec(
  cmd: string,
  args: string[],
  opts: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      cmd,
      args,
      { cwd: opts.cwd, env: opts.env ?? npmEnv(), timeout: opts.timeoutMs ?? 120_000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => done({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

let packed: { filename: string; files: { path: string }[] };
let app: string;
let svcBin: string;

const svc = (args: string[], env = isolatedEnv()) => exec(process.execPath, [svcBin, ...args], { cwd: app, env, timeoutMs: 60_000 });

beforeAll(async () => {
  const out = mkdtempSync(join(tmpdir(), 'svc-pack-'));
  const pack = await exec('npm', ['pack', '--json', '--pack-destination', out], { cwd: ROOT });
  expect(pack.code, pack.stderr).toBe(0);
  packed = (JSON.parse(pack.stdout) as (typeof packed)[])[0]!;

  // An empty folder. --prefix pins npm to it: without a package.json npm walks up looking for a
  // project root and may settle on a parent that has node_modules.
  app = mkdtempSync(join(tmpdir(), 'svc-install-'));
  const install = await exec(
    'npm',
    ['install', '--prefix', app, '--no-audit', '--no-fund', '--prefer-offline', '--loglevel', 'error', join(out, packed.filename)],
    { cwd: app, timeoutMs: 240_000 },
  );
  expect(install.code, install.stderr).toBe(0);
  svcBin = join(app, 'node_modules', '.bin', 'svc');
}, 300_000);

describe('npm pack', () => {
  test('the tarball holds what svc needs at run time, and not its sources or tests', () => {
    const paths = packed.files.map((f) => f.path);
    for (const needed of [
      'package.json',
      'README.md',
      ...Object.values(pkg.bin),
      'dist/cli.js',
      'dist/server.js',
      'completions/svc.bash',
      'completions/_svc',
      'completions/svc.fish',
      'examples/demo-agent.mjs',
      'docs/json.md',
    ]) {
      expect(paths, needed).toContain(needed);
    }
    expect(paths.filter((p) => /^(src|test|scripts|node_modules)\//.test(p) || p.endsWith('.ts') || p.endsWith('.tgz'))).toEqual([]);
  });

  test('installing it brings no other package: the bundle holds what svc loads', () => {
    expect(Object.keys((pkg as { dependencies?: object }).dependencies ?? {})).toEqual([]);
    const installed = readdirSync(join(app, 'node_modules')).filter((n) => !n.startsWith('.'));
    expect(installed).toEqual([pkg.name]);
  });

  test('installed: a command that reads and writes the stored settings', { timeout: 60_000 }, async () => {
    const env = isolatedEnv();
    expect((await svc(['config', 'set', 'project', 'PROJ'], env)).code).toBe(0);
    const got = await svc(['config', 'get', 'project'], env);
    expect(got.code, got.stderr).toBe(0);
    expect(got.stdout.trim()).toBe('PROJ');
  });

  test('installed in an empty folder: svc --version and svc --help', { timeout: 60_000 }, async () => {
    const version = await svc(['--version']);
    expect(version.code, version.stderr).toBe(0);
    expect(version.stdout.trim()).toBe(pkg.version);

    const help = await svc(['--help']);
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/^Usage: svc \[options\] \[command\]/);
    for (const c of ['run', 'next', 'auth', 'items', 'api', 'server']) expect(help.stdout).toMatch(new RegExp(`\\n  ${c}\\b`));
  });

  test('installed: the same command tree as the built one (its bash completion), and help exit-codes', { timeout: 60_000 }, async () => {
    const bash = await svc(['completion', 'bash']);
    expect(bash.code).toBe(0);
    const built = await exec(process.execPath, [join(ROOT, 'bin/svc.js'), 'completion', 'bash'], { cwd: ROOT, env: isolatedEnv() });
    expect(bash.stdout).toBe(built.stdout);
    expect((await svc(['help', 'exit-codes'])).stdout).toMatch(/^\s*143 /m);
  });

  test('installed: svc demo runs a whole dispatch run (embedded service, example agent)', { timeout: 120_000 }, async () => {
    const r = await svc(['demo', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ summary: { stopReason: 'completed', status: 'succeeded' } });
  });
});
