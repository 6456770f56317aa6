// `npm run image`: builds the runner image localhost/svc:<version> from the Containerfile with
// Podman and Docker, on a machine with no container registry.
//
// The Containerfile builds FROM a Debian image with Node 22. Unless SVC_IMAGE_BASE names one
// (e.g. docker.io/library/node:22-bookworm-slim where a registry is reachable), the base is made
// here: `debootstrap --variant=minbase` with git, ca-certificates and nftables, plus the `node`
// binary of the npm `node` package this project already installs, imported as
// localhost/svc-base:<tag>. The tag names the Debian suite and the Node version, so the base is made
// once and a second build takes seconds (a base made before nftables joined the list gets it from
// the Containerfile's apt-get). The image is built for every engine that answers (Podman, and Docker when its
// daemon runs): `svc server` may be given either. Environment: SVC_IMAGE_ENGINE (podman|docker:
// that one only), SVC_IMAGE_BASE, SVC_IMAGE_TAG, DEBIAN_MIRROR (default http://deb.debian.org/debian).
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const suite = 'bookworm';
const onPath = (cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;

function fail(message) {
  process.stderr.write(`image: ${message}\n`);
  process.exit(1);
}

// Every engine that answers gets the image (svc server may be given either); SVC_IMAGE_ENGINE names one.
const answers = (cmd) => onPath(cmd) && spawnSync(cmd, cmd === 'docker' ? ['info'] : ['version'], { stdio: 'ignore', env: engineEnv(cmd) }).status === 0;
const asked = process.env.SVC_IMAGE_ENGINE;
if (asked && asked !== 'podman' && asked !== 'docker') fail(`SVC_IMAGE_ENGINE is podman or docker, got '${asked}'`);
if (asked && !onPath(asked)) fail(`${asked} is not installed`);
const engines = asked ? [asked] : ['podman', 'docker'].filter(answers);
if (!engines.length) fail('neither podman nor docker answers (apt-get install podman runc, or docker.io and scripts/dockerd.sh start)');

/** The engine's environment: on hosts where crun cannot start containers (containers.conf says which), runc and cgroupfs. */
function engineEnv(engine) {
  const env = { ...process.env };
  if (engine === 'podman' && !env.CONTAINERS_CONF && onPath('runc')) env.CONTAINERS_CONF = join(root, 'containers.conf');
  return env;
}

/** Runs the engine, its output shown; a failure ends the script with the engine's own status. */
function run(engine, args, opts = {}) {
  const r = spawnSync(engine, args, { stdio: 'inherit', env: engineEnv(engine), ...opts });
  if (r.error) fail(`${engine}: ${r.error.message}`);
  if (r.status !== 0) fail(`${engine} ${args[0]} failed (exit ${r.status})`);
}
const imageExists = (engine, ref) =>
  spawnSync(engine, engine === 'podman' ? ['image', 'exists', ref] : ['image', 'inspect', ref], { stdio: 'ignore', env: engineEnv(engine) }).status === 0;

/** The debootstrapped Debian base with Node 22, made once per Debian suite and Node version and imported into each engine lacking it. */
function offlineBase() {
  const nodeBin = join(root, 'node_modules', 'node', 'bin', 'node');
  if (!existsSync(nodeBin)) fail('node_modules/node/bin/node is missing: run npm ci first');
  const nodeVersion = execFileSync(nodeBin, ['--version'], { encoding: 'utf8' }).trim();
  if (!nodeVersion.startsWith('v22.')) fail(`the npm node package holds ${nodeVersion}, not Node 22`);
  const tag = `localhost/svc-base:${suite}-node${nodeVersion.slice(1)}`;
  const lacking = engines.filter((engine) => !imageExists(engine, tag));
  for (const engine of engines.filter((e) => !lacking.includes(e))) process.stderr.write(`image: base ${tag} is cached in ${engine}\n`);
  if (!lacking.length) return tag;
  if (!onPath('debootstrap')) fail('debootstrap is not installed (apt-get install debootstrap), or set SVC_IMAGE_BASE to a Node 22 Debian image');
  if (process.getuid?.() !== 0) fail('making the base with debootstrap needs root, or set SVC_IMAGE_BASE to a Node 22 Debian image');
  const dir = mkdtempSync(join(tmpdir(), 'svc-base-'));
  const rootfs = join(dir, 'rootfs');
  try {
    process.stderr.write(`image: making ${tag} with debootstrap (about a minute, once)\n`);
    const mirror = process.env.DEBIAN_MIRROR || 'http://deb.debian.org/debian';
    const boot = spawnSync('debootstrap', ['--variant=minbase', '--include=git,ca-certificates,nftables', suite, rootfs, mirror], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    if (boot.status !== 0) fail(`debootstrap failed (exit ${boot.status ?? boot.error?.message})`);
    copyFileSync(nodeBin, join(rootfs, 'usr', 'local', 'bin', 'node'));
    // What an image needs no copy of: downloaded packages, package lists, documentation.
    for (const sub of ['var/cache/apt/archives', 'var/lib/apt/lists', 'usr/share/doc', 'usr/share/man', 'usr/share/info']) {
      const p = join(rootfs, sub);
      if (existsSync(p)) for (const f of readdirSync(p)) if (f !== 'partial' && f !== 'lock') rmSync(join(p, f), { recursive: true, force: true });
    }
    for (const engine of lacking) {
      const tar = spawnSync(
        'sh',
        [
          '-c',
          `tar -C "$1" -c . | "$2" import --change "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" - "$3"`,
          'sh',
          rootfs,
          engine,
          tag,
        ],
        { stdio: ['ignore', 'ignore', 'inherit'], env: engineEnv(engine) },
      );
      if (tar.status !== 0) fail(`${engine} import failed (exit ${tar.status})`);
    }
    return tag;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const base = process.env.SVC_IMAGE_BASE || offlineBase();
const image = process.env.SVC_IMAGE_TAG || `localhost/svc:${pkg.version}`;
const context = mkdtempSync(join(tmpdir(), 'svc-image-'));
try {
  // npm pack runs prepack (a clean build), so the image holds exactly what the package ships.
  const packed = execFileSync('npm', ['pack', '--silent', '--pack-destination', context], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })
    .trim()
    .split('\n')
    .pop();
  renameSync(join(context, packed), join(context, 'svc-cli.tgz'));
  copyFileSync(join(root, 'scripts', 'svc-entrypoint.sh'), join(context, 'svc-entrypoint.sh'));
  for (const engine of engines) {
    const pull = engine === 'podman' ? ['--pull=never'] : [];
    // The host's network for RUN steps: no bridge or firewall set-up needed (a registry base runs apt-get).
    run(engine, ['build', ...pull, '--network=host', '-f', join(root, 'Containerfile'), '--build-arg', `BASE=${base}`, '-t', image, context]);
    process.stdout.write(`${engine} ${image}\n`);
  }
} finally {
  rmSync(context, { recursive: true, force: true });
}
