// A bare machine: `npm ci && npm test` of the committed source (git archive of HEAD) passes in a
// container of the runner's Debian base (the debootstrapped `localhost/svc-base` of `npm run
// image`: minbase with git and CA certificates) with no tmux, chromium, gh, Podman or Docker, and
// no Node of its own: this machine's Node and npm are mounted in read-only, with its CA bundle
// (the registry is reached through it here). `npm test` needs nothing but git and npm; what needs
// more is in test/support/system-tests.ts. A system test: Podman as root, minutes long.
//
// SVC_BARE_REMOVE=git (packages, comma-separated) takes packages out of the container first, to
// see this test fail when the machine lacks one (the log names the test files that then fail).
import { execFileSync, spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdtempSync, readFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { expect, test } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const CA = '/etc/ssl/certs/ca-certificates.crt';
const MINUTES = 60_000;

/** The base `npm run image` makes (scripts/image.mjs): bookworm with the npm `node` package's version. */
function baseImage(): string {
  const version = execFileSync(join(ROOT, 'node_modules', 'node', 'bin', 'node'), ['--version'], { encoding: 'utf8' }).trim();
  return `localhost/svc-base:bookworm-node${version.slice(1)}`;
}

/** This machine's Node and the npm beside it, as the paths a `nodejs` package installs them at. */
function machineNode(): { node: string; npm: string } {
  const node = execFileSync('sh', ['-c', 'command -v node'], { encoding: 'utf8', env: { PATH: '/usr/local/bin:/usr/bin:/bin' } }).trim();
  const npmCli = realpathSync(execFileSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8', env: { PATH: dirname(node) } }).trim());
  // …/node_modules/npm/bin/npm-cli.js: the npm folder is two up.
  return { node: realpathSync(node), npm: dirname(dirname(npmCli)) };
}

const podmanEnv = () => ({ ...process.env, CONTAINERS_CONF: process.env.CONTAINERS_CONF ?? join(ROOT, 'containers.conf') });

test(
  'npm ci && npm test of HEAD pass on a machine with git and CA certificates only',
  async () => {
    expect(process.getuid?.(), 'run as root: Podman as root').toBe(0);
    const image = baseImage();
    const has = spawn('podman', ['image', 'exists', image], { env: podmanEnv(), stdio: 'ignore' });
    const found = await new Promise<number | null>((done) => has.on('close', done));
    expect(found, `${image} is missing: run \`npm run image\` first (it makes the base)`).toBe(0);
    const { node, npm } = machineNode();
    expect(existsSync(join(npm, 'bin', 'npm-cli.js')), `npm beside ${node}`).toBe(true);

    const work = mkdtempSync(join(tmpdir(), 'svc-bare-'));
    const src = join(work, 'src');
    execFileSync('sh', ['-c', 'mkdir "$2" && git -C "$1" archive HEAD | tar -x -C "$2"', 'sh', ROOT, src]);
    const remove = (process.env.SVC_BARE_REMOVE ?? '').split(',').filter(Boolean);
    const script = [
      'set -e',
      // The base's own Node goes: the machine's, mounted read-only, is the only one.
      'rm -f /usr/local/bin/node',
      'ln -s /usr/lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm',
      ...(remove.length ? [`dpkg --remove --force-depends ${remove.join(' ')} >/dev/null`] : []),
      'echo "bare: node $(node --version), npm $(npm --version)"',
      'for p in tmux chromium gh podman docker; do if command -v $p >/dev/null; then echo "bare: $p is here"; fi; done',
      'npm ci --no-audit --no-fund',
      'npm test',
    ].join('\n');
    const log = join(work, 'bare.log');
    const out = createWriteStream(log);
    const started = Date.now();
    const child = spawn(
      'podman',
      [
        'run',
        '--rm',
        // Root of a machine, not of a container: removing another uid's System V IPC objects (the
        // pool's leftovers, uid-leftovers.ts) takes CAP_SYS_ADMIN, which Podman drops by default.
        '--cap-add=SYS_ADMIN',
        ...['-v', `${node}:/usr/bin/node:ro`, '-v', `${npm}:/usr/lib/node_modules/npm:ro`, '-v', `${CA}:${CA}:ro`, '-v', `${src}:/src`],
        ...['-w', '/src', '-e', 'HOME=/root', '-e', `NODE_EXTRA_CA_CERTS=${CA}`, '-e', `npm_config_cafile=${CA}`, '-e', 'npm_config_update_notifier=false'],
        image,
        'sh',
        '-c',
        script,
      ],
      { env: podmanEnv(), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child.stdout.pipe(out, { end: false });
    child.stderr.pipe(out, { end: false });
    const code = await new Promise<number | null>((done) => child.on('close', done));
    out.end();
    await new Promise<void>((done) => out.on('finish', () => done()));
    const text = readFileSync(log, 'utf8');
    // The log goes with the run's temp folder: the files that failed, and the end of it, are the message.
    const plain = text.replace(/\u001b\[[0-9;]*m/g, '');
    const failed = [...new Set([...plain.matchAll(/^ FAIL +(\S+\.test\.ts)/gm)].map((m) => m[1]))];
    const tail = `${text.slice(-4000)}\n(${Math.round((Date.now() - started) / 1000)} s; failed: ${failed.join(', ') || 'none'})`;
    expect(text, tail).toMatch(/^bare: node v20\.\d+\.\d+, npm \d+/m);
    expect(text.match(/^bare: \S+ is here$/gm) ?? [], 'programs a bare machine has not').toEqual([]);
    expect(code, tail).toBe(0);
    expect(plain, tail).toMatch(/Test Files\s+\d+ passed/);
  },
  60 * MINUTES,
);
