// `svc server`'s hosted-executor flags and the honest refusals: a --hosted-* flag without an engine,
// a Kubernetes flag for Podman, an engine that is not installed, a missing image, an engine that
// refuses to start any container: each is one line on stderr, exit 2, and nothing listens. And the
// Podman dry run prints the command line it would run, with no credential in it.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isolatedEnv } from '../../support/cli.js';
import { startSvc, svcInProcess } from '../../support/svc-in-process.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
// SVC_IMAGE_TAG names another image, as it does for npm run image.
const IMAGE = process.env.SVC_IMAGE_TAG || `localhost/svc:${VERSION}`;
// This host's Podman needs runc and cgroupfs (containers.conf); the test of a refusing engine names another.
const podmanEnv = (extra: Record<string, string> = {}) =>
  isolatedEnv({ CONTAINERS_CONF: process.env.CONTAINERS_CONF ?? join(ROOT, 'containers.conf'), ...extra });

const serve = (args: string[], env = podmanEnv()) => svcInProcess(['server', '--port', '0', ...args], { env });

describe('svc server --hosted-executor: refusals, one line each, exit 2', () => {
  it.each([
    [['--hosted-image', 'x'], 'svc: --hosted-image needs --hosted-executor podman|docker|kubernetes'],
    [['--dry-run'], 'svc: --dry-run needs --hosted-executor podman|docker|kubernetes'],
    [['--hosted-executor', 'podman', '--hosted-namespace', 'ci'], 'svc: --hosted-namespace is for --hosted-executor kubernetes'],
    // Gone: every Podman and Docker runner runs svc as root and its agents as reserved uids.
    [['--hosted-executor', 'podman', '--hosted-as-root'], "svc: unknown option '--hosted-as-root'"],
    [
      ['--hosted-executor', 'kubernetes', '--hosted-requests', 'cpu'],
      "svc: --hosted-requests takes NAME=QUANTITY pairs such as cpu=500m,memory=512Mi, got 'cpu'",
    ],
    [['--hosted-executor', 'podman', '--hosted-timeout', 'soon'], 'svc: invalid duration "soon" for --hosted-timeout'],
    [['--hosted-executor', 'podman', '--hosted-base-url', 'svc.local'], "svc: --hosted-base-url takes an http(s) URL, got 'svc.local'"],
    // A runner fences its legs with nftables rules in its network namespace: never the host's.
    ...['host', 'container:svc-other', 'ns:/proc/1/ns/net'].flatMap((network) =>
      ['podman', 'docker'].map((engine): [string[], string] => [
        ['--hosted-executor', engine, '--hosted-network', network, '--dry-run'],
        `svc: --hosted-network ${network}: a runner needs a network namespace of its own, where its svc fences each leg (docs/hosted.md, "Networking")`,
      ]),
    ),
    [['--hosted-executor', 'lxc'], "svc: option '--hosted-executor <engine>' argument 'lxc' is invalid. Allowed choices are podman, docker, kubernetes."],
  ])('svc server %j', async (args, line) => {
    const r = await serve(args);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')[0]).toContain(line);
  });

  it('an engine that is not installed', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'svc-no-engines-'));
    for (const engine of ['podman', 'docker']) {
      const r = await serve(['--hosted-executor', engine], podmanEnv({ PATH: empty }));
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(`svc: ${engine} is not installed (spawn ${engine} ENOENT)\n`);
      expect(r.stdout).toBe('');
    }
  });

  it("a missing image: podman's own words, and how to build it", async () => {
    const r = await serve(['--hosted-executor', 'podman', '--hosted-image', 'localhost/svc-missing:0']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'svc: podman: Error: inspecting object: localhost/svc-missing:0: image not known (build the image with npm run image, or name another with --hosted-image)\n',
    );
  });

  it('an engine that refuses to start containers is said at start, in its own words', async () => {
    const conf = join(mkdtempSync(join(tmpdir(), 'svc-conf-')), 'containers.conf');
    writeFileSync(conf, '[engine]\nruntime = "no-such-runtime"\n');
    const r = await serve(['--hosted-executor', 'podman', '--hosted-image', IMAGE], podmanEnv({ CONTAINERS_CONF: conf }));
    expect(r.code).toBe(2);
    // (This runtime fails every podman command, the image's inspection first.)
    expect(r.stderr).toBe('svc: podman: Error: default OCI runtime "no-such-runtime" not found: invalid argument\n');
  });

  it('an engine whose runtime cannot start the image is said at start, not at the first run', async () => {
    // The image is there, but every container fails to start (a runtime that exits at once).
    const conf = join(mkdtempSync(join(tmpdir(), 'svc-conf-')), 'containers.conf');
    writeFileSync(
      conf,
      '[containers]\ndefault_ulimits = []\n[engine]\nruntime = "broken"\ncgroup_manager = "cgroupfs"\n[engine.runtimes]\nbroken = ["/bin/false"]\n',
    );
    const r = await serve(['--hosted-executor', 'podman', '--hosted-image', IMAGE], podmanEnv({ CONTAINERS_CONF: conf }));
    expect(r.code).toBe(2);
    expect(r.stderr.split('\n')).toHaveLength(2);
    expect(r.stderr).toMatch(new RegExp(`^svc: podman cannot start a container of ${IMAGE.replace(/[.]/g, '\\.')}: podman: Error: container create failed`));
  });

  it("a runtime refusing the container's rlimits (crun or runc on hosts like ours) points at the settings that work", async () => {
    // A nofile limit above fs.nr_open fails setrlimit whatever the capabilities, as a default one
    // fails without CAP_SYS_RESOURCE here.
    const conf = join(mkdtempSync(join(tmpdir(), 'svc-conf-')), 'containers.conf');
    writeFileSync(conf, '[containers]\ndefault_ulimits = ["nofile=2000000000:2000000000"]\n[engine]\nruntime = "runc"\ncgroup_manager = "cgroupfs"\n');
    const r = await serve(['--hosted-executor', 'podman', '--hosted-image', IMAGE], podmanEnv({ CONTAINERS_CONF: conf }));
    expect(r.code).toBe(2);
    expect(r.stderr.split('\n')).toHaveLength(2);
    expect(r.stderr).toContain(`svc: podman cannot start a container of ${IMAGE}: podman: Error: runc: runc create failed`);
    expect(r.stderr).toContain('error setting rlimit');
    expect(r.stderr).toMatch(/\(this host needs runc, cgroupfs and no default ulimits: docs\/hosted\.md, "Podman on hosts like ours"\)\n$/);
  });
});

describe.runIf(process.getuid?.() === 0)('a root Podman without subordinate ids for its runners', () => {
  it("is refused at start, in Podman's words, pointing at the fix", async () => {
    // The store as this host's, but user namespaces taken from a user /etc/subuid does not list.
    const conf = join(mkdtempSync(join(tmpdir(), 'svc-storage-')), 'storage.conf');
    writeFileSync(
      conf,
      '[storage]\ndriver = "overlay"\nrunroot = "/run/containers/storage"\ngraphroot = "/var/lib/containers/storage"\n[storage.options]\nroot-auto-userns-user = "svc-no-subuids"\n',
    );
    const r = await serve(['--hosted-executor', 'podman', '--hosted-image', IMAGE], podmanEnv({ CONTAINERS_STORAGE_CONF: conf }));
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `svc: podman cannot start a container of ${IMAGE}: podman: Error: creating container storage: could not find enough available IDs ` +
        '(runners get user namespaces from the subordinate ids of the user containers: docs/hosted.md, "Podman on hosts like ours")\n',
    );
  });
});

describe('svc server --hosted-executor podman --dry-run', () => {
  it('prints the podman command line for each hosted run, with no credential, and starts nothing', async () => {
    const server = startSvc(['server', '--port', '0', '--seed', 'demo', '--hosted-executor', 'podman', '--hosted-agent-cmd', "sh -c 'echo hi'", '--dry-run'], {
      env: podmanEnv(),
    });
    try {
      const deadline = Date.now() + 15_000;
      while (server.stdout.text.split('\n').length < 3) {
        if (Date.now() > deadline) throw new Error(`svc server did not start: ${server.stderr.text}`);
        await new Promise((r) => setTimeout(r, 10));
      }
      const [url, token] = server.stdout.text.split('\n') as [string, string];
      const personal = isolatedEnv({ SVC_BASE_URL: url, SVC_TOKEN: token });
      const opened = await svcInProcess(['run', 'DEMO-6', '--hosted', '--json'], { env: personal });
      expect(opened.code, opened.stderr).toBe(0);
      const runId = JSON.parse(opened.stdout).run.id as string;
      while (server.stdout.text.split('\n').length < 4) {
        if (Date.now() > deadline) throw new Error('no dry-run line');
        await new Promise((r) => setTimeout(r, 10));
      }
      const line = server.stdout.text.split('\n')[2]!;
      expect(line).toBe(
        `podman run --rm --pull=never --init --name svc-${runId} --label svc.run-id=${runId} --network bridge --user 0:0 --cap-drop ALL ` +
          '--cap-add CHOWN --cap-add DAC_OVERRIDE --cap-add KILL --cap-add NET_ADMIN --cap-add SETGID --cap-add SETUID --security-opt no-new-privileges ' +
          '--userns auto:size=65536 ' +
          `--env SVC_BASE_URL=${url} --env SVC_RUN_ID=${runId} --volume '<0400 file holding the run credential>:/run/secrets/svc-run-token:ro,U' ` +
          `--env SVC_SERVICE_SOCKET=/run/svc-service/service.sock --volume '<0700 folder of the service'\\''s socket>:/run/svc-service:ro,U' ` +
          `localhost/svc:0.0.0-test attach --agent-cmd 'sh -c '\\''echo hi'\\'''`,
      );
      const shown = await svcInProcess(['runs', 'show', runId], { env: personal });
      expect(shown.stdout).toContain(`runner podman svc-${runId} · dry run`);
    } finally {
      server.context()?.abort.abort('SIGTERM');
      await server.done;
    }
  });
});
