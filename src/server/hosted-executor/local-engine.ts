// Podman and Docker: one container per hosted run, started as a child process of the service
// (`<engine> run --rm`), so its exit code is the runner's and its output streams into the log file.
//
// svc runs as root in the container, each agent as a uid of the image's SVC_AGENT_USER range
// (docs/hosted.md, "The security context"): every capability is dropped but RUNNER_CAPABILITIES,
// no-new-privileges, and with a root Podman a user namespace of its own (--userns=auto), so there
// the container's root and its agents' uids are no uids of the host (under Docker the agents' uids
// are the host's, from a range no host pool may take).
//
// The credential is a file, not an environment variable: `podman inspect` and `docker inspect`
// show every `-e` and `--env-file` value, so an env file would put it in the engine's records. The
// file is written 0400 in a 0700 folder of the service, owned by the container's root (Podman's
// `U` hands it to the namespace's root), bind-mounted read-only at /run/secrets/svc-run-token, and
// the image's entry point reads it into svc's own environment (scripts/svc-entrypoint.sh). It is
// deleted when the container ends.
//
// The runner's network is a namespace of its own, never the host's (docs/hosted.md, "Networking"):
// its svc fences each leg with nftables rules (NET_ADMIN, among RUNNER_CAPABILITIES), which in the
// host's namespace would be rules over the host. A service on the host's loopback (the default) is
// reached through a unix socket mounted into the runner (service-bridge.ts).
import { execFile, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { loopbackTarget, SERVICE_BRIDGE_DIR, SERVICE_SOCKET_ENV, SERVICE_SOCKET_NAME, startServiceBridge, type ServiceBridge } from './service-bridge.js';
import { HostedEngineError, lastLine, RUNNER_CAPABILITIES, type HostedEngine, type RunnerHandle, type RunnerSpec } from './types.js';

const run = promisify(execFile);
const SECRET_PATH = '/run/secrets/svc-run-token';
/** Seconds between SIGTERM and SIGKILL when a runner is stopped. */
const STOP_GRACE_S = 10;
/**
 * A root Podman's user namespace per runner, from the subordinate ids of the user `containers`:
 * 65536 ids, so the image's reserved agent uids (65520-65533) are mapped too.
 */
const PODMAN_USERNS = 'auto:size=65536';
/** The runners' network when none is named: each engine's own bridge, a namespace per container. */
export const DEFAULT_RUNNER_NETWORK = 'bridge';

/**
 * Why a `--network` value is refused: one that joins the host's namespace (or another container's,
 * which may be the host's), where a runner with NET_ADMIN would rule the host's firewall.
 */
export function sharedNetwork(network: string): string | null {
  if (network === 'host' || /^(container|ns):/.test(network))
    return `--hosted-network ${network}: a runner needs a network namespace of its own, where its svc fences each leg (docs/hosted.md, "Networking"); leave it out for the engine's bridge, or name a network`;
  return null;
}

/** The engine's own words for a failed command: its last stderr line, or the spawn error. */
function engineError(engine: string, error: unknown): string {
  const e = error as NodeJS.ErrnoException & { stderr?: string };
  if (e.code === 'ENOENT') return `${engine} is not installed (spawn ${engine} ENOENT)`;
  return `${engine}: ${lastLine(e.stderr ?? '') || e.message}`;
}

export function localEngine(engine: 'podman' | 'docker', opts: { network?: string; env?: NodeJS.ProcessEnv }): HostedEngine {
  const env = opts.env ?? process.env;
  const isRoot = process.getuid?.() === 0;
  const network = opts.network ?? DEFAULT_RUNNER_NETWORK;
  const shared = sharedNetwork(network);
  if (shared) throw new HostedEngineError(shared);

  const confinement = confinementOf(engine, isRoot);
  // Podman's container root is a subordinate uid of the host (rootless, or --userns): `U` hands a mount to it.
  const handOver = engine === 'podman' ? ',U' : '';

  /** Everything of `<engine> run` but the image's arguments; no secret in it. */
  const runArgs = (spec: RunnerSpec, secretFile: string, bridgeDir: string | null): string[] => [
    'run',
    '--rm',
    '--pull=never',
    '--init',
    '--name',
    spec.name,
    '--label',
    `svc.run-id=${spec.runId}`,
    '--network',
    network,
    ...confinement,
    '--env',
    `SVC_BASE_URL=${spec.baseUrl}`,
    '--env',
    `SVC_RUN_ID=${spec.runId}`,
    '--volume',
    `${secretFile}:${SECRET_PATH}:ro${handOver}`,
    ...(bridgeDir
      ? ['--env', `${SERVICE_SOCKET_ENV}=${SERVICE_BRIDGE_DIR}/${SERVICE_SOCKET_NAME}`, '--volume', `${bridgeDir}:${SERVICE_BRIDGE_DIR}:ro${handOver}`]
      : []),
    spec.image,
    ...spec.args,
  ];

  return {
    name: engine,
    runnerName: (runId) => `svc-${runId.replace(/[^a-zA-Z0-9_.-]/g, '-')}`,

    preflight: (image) => preflight(engine, image, { env, network, confinement }),

    describe: (spec) =>
      [engine, ...runArgs(spec, '<0400 file holding the run credential>', loopbackTarget(spec.baseUrl) ? "<0700 folder of the service's socket>" : null)]
        .map(shellWord)
        .join(' '),

    async start(spec, credential, logFile) {
      const secretFile = join(dirname(logFile), `${spec.runId}.credential`);
      // Read by the container's root alone: none of its agents' uids may read it.
      writeFileSync(secretFile, credential, { mode: 0o400 });
      const target = loopbackTarget(spec.baseUrl);
      let bridge: ServiceBridge | null = null;
      try {
        bridge = target ? await startServiceBridge(target, dirname(logFile), spec.runId) : null;
      } catch (error) {
        rmSync(secretFile, { force: true });
        throw new HostedEngineError(`cannot make the service's socket for ${spec.name}: ${(error as Error).message}`);
      }
      const cleanUp = async () => {
        rmSync(secretFile, { force: true });
        await bridge?.close();
      };
      const out = openSync(logFile, 'a', 0o600);
      const child = spawn(engine, runArgs(spec, secretFile, bridge?.dir ?? null), { env, stdio: ['ignore', out, out] });
      closeSync(out);
      const exited = new Promise<{ exitCode: number | null; error: string | null; timedOut: boolean }>((resolve) => {
        child.once('error', (error) => {
          void cleanUp().then(() => resolve({ exitCode: null, error: engineError(engine, error), timedOut: false }));
        });
        child.once('exit', (code, signal) => {
          // 125: the engine itself failed (no image, a refused runtime); its words end the log.
          const error = code === 125 ? `${engine}: ${lastLine(readFileSync(logFile, 'utf8'))}` : signal ? `${engine} ended by ${signal}` : null;
          void cleanUp().then(() => resolve({ exitCode: code, error, timedOut: false }));
        });
      });
      const handle: RunnerHandle = {
        exited,
        async stop() {
          await run(engine, ['stop', '-t', String(STOP_GRACE_S), spec.name], { env }).catch(() => undefined);
        },
      };
      return handle;
    },
  };
}

/** Quotes a word for a shell only when it needs it (the dry run's command line). */
function shellWord(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** How every container of ours runs, the preflight's too: root, few capabilities, a namespace of its own. */
function confinementOf(engine: 'podman' | 'docker', isRoot: boolean): string[] {
  return [
    '--user',
    '0:0',
    '--cap-drop',
    'ALL',
    ...RUNNER_CAPABILITIES.flatMap((cap) => ['--cap-add', cap]),
    '--security-opt',
    'no-new-privileges',
    // Rootless Podman maps the container into the user's own subordinate ids already.
    ...(engine === 'podman' && isRoot ? ['--userns', PODMAN_USERNS] : []),
  ];
}

/** The image is there and a container of it starts, confined as a runner: said now, not at the first run. */
async function preflight(engine: 'podman' | 'docker', image: string, o: { env: NodeJS.ProcessEnv; network: string; confinement: string[] }): Promise<void> {
  const { env, network, confinement } = o;
  try {
    await run(engine, ['image', 'inspect', '--format', '{{.Id}}', image], { env });
  } catch (error) {
    const line = engineError(engine, error);
    // Only a missing image gets the hint; an engine that fails every command says its own words.
    const missing = /image not known|no such image|no such object/i.test(line);
    throw new HostedEngineError(missing ? `${line} (build the image with npm run image, or name another with --hosted-image)` : line);
  }
  // A container that cannot start at all (a runtime the host refuses) is said now, not at the first run.
  try {
    await run(engine, ['run', '--rm', '--pull=never', '--network', network, ...confinement, '--entrypoint', 'true', image], { env });
  } catch (error) {
    const line = engineError(engine, error);
    // Debian 12 as root without CAP_SYS_RESOURCE, hybrid cgroups: the settings that work are documented.
    const hint =
      engine === 'podman' && /rlimit|cgroups? .*hybrid/i.test(line)
        ? ' (this host needs runc, cgroupfs and no default ulimits: docs/hosted.md, "Podman on hosts like ours")'
        : engine === 'podman' && /subuid|available IDs/i.test(line)
          ? ' (runners get user namespaces from the subordinate ids of the user containers: docs/hosted.md, "Podman on hosts like ours")'
          : '';
    throw new HostedEngineError(`${engine} cannot start a container of ${image}: ${line}${hint}`);
  }
}
