// The hosted executor for real, on Podman and on Docker (podman-runner.test.ts, docker-runner.test.ts
// each run this suite): `svc server --seed demo --git-root … --hosted-executor ENGINE`, then `svc run
// KEY --hosted`. The service starts the runner image (npm run image; .ci/run builds it before the
// suite), in which svc runs as root and its agent as a uid of the image's reserved range: it clones
// from the service's git remote, runs a shell agent, pushes svc/KEY and closes the run. The run
// credential is looked for in `ENGINE inspect`, the container's argv and environment as the engine
// records them, every process's argv on the host, the runner's log and the service's output. An
// attacking agent gets nothing, a host leg of uids around the image's old user reaches no
// runner process, and a runner that dies before closing its run leaves it closed failed. Needs the
// engine (Podman with runc; dockerd running: scripts/dockerd.sh) and the image: missing, they fail.
// SVC_IMAGE_TAG names another image than localhost/svc:<version>, as it does for npm run image.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RUNNER_AGENT_UIDS } from '../../../src/dispatch/boundary/user.js';
import { createRepository, repositoryPath } from '../../../src/server/git/index.js';
import { makeRepo } from '../../support/cli.js';
import type { LocalServer } from '../../support/server-process.js';
import { svcInProcess } from '../../support/svc-in-process.js';
import { IMAGE, inRange, runnerWorld, shellAgent } from './runner-world.js';
import { git, leaks } from '../../support/hosted.js';

// Loaded as the service loads it (vitest's resolver does not know the `node:sqlite` builtin).
const { DatabaseSync } = createRequire(import.meta.url)('node:sqlite') as typeof import('node:sqlite');
const TOKEN_SHAPES = [/svc_run_[A-Za-z0-9]{8,}/, /svc_pat_[A-Za-z0-9]{8,}/, /ghs_[A-Za-z0-9]{16,}/];

export function runnerSuite(engine: 'podman' | 'docker'): void {
  const w = runnerWorld(engine);
  const { cli, exists, killSvc, api, until, service, hostedOn, openHosted, ended, runningAgent, hostPids, mainOf } = w;

  describe(`svc server --hosted-executor ${engine} (real containers)`, () => {
    it('starts the image for a hosted run: svc as root, the agent as a reserved uid that cannot read the credential; svc/KEY pushed, the run succeeded, the credential nowhere', async () => {
      const { key, runId } = await openHosted('Add a widget in a container');
      const name = `svc-${runId}`;
      // The container runs (the agent waits for the go): what the engine recorded, and every argv here.
      const inspect = await until('the runner container', () =>
        cli('inspect', name).then(
          (t) => (JSON.parse(t)[0]?.State?.Running ? t : undefined),
          () => undefined,
        ),
      );
      const credentialFile = join(w.logs, `${runId}.credential`);
      const credential = readFileSync(credentialFile, 'utf8');
      expect(credential).toMatch(/^svc_run_/);
      const hostArgv = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8', maxBuffer: 16 << 20 });
      const containerArgv = await cli('exec', name, 'sh', '-c', 'for p in /proc/[0-9]*; do tr "\\0" " " < $p/cmdline; echo; done');
      const pid1Env = await cli('exec', name, 'cat', '/proc/1/environ');
      // svc is the container's root; the file is its root's alone, 0400.
      const svcUser = await cli(
        'exec',
        name,
        'sh',
        '-c',
        'for p in /proc/[0-9]*; do tr "\\0" " " < $p/cmdline | grep -q "^node /opt/svc/bin/svc.js" && stat -c %u $p; done; stat -c "%u %a" /run/secrets/svc-run-token',
      );
      expect(svcUser.trim().split('\n')).toEqual(['0', '0 400']);
      const config = JSON.parse(inspect)[0] as {
        Config: { Env: string[]; Labels: Record<string, string> };
        Args: string[];
        HostConfig: Record<string, unknown>;
        State: { Pid: number };
      };
      // The runner's network is a namespace of its own, not the host's (its svc fences legs there).
      expect(readlinkSync(`/proc/${config.State.Pid}/ns/net`)).not.toBe(readlinkSync('/proc/self/ns/net'));
      expect(config.Config.Env).toEqual(
        expect.arrayContaining([`SVC_RUN_ID=${runId}`, `SVC_BASE_URL=${w.server.url}`, `SVC_AGENT_USER=${RUNNER_AGENT_UIDS.first}-${RUNNER_AGENT_UIDS.last}`]),
      );
      expect(config.Config.Labels['svc.run-id']).toBe(runId);
      expect(config.Args).toEqual(expect.arrayContaining(['attach', '--agent-cmd']));
      await cli('exec', name, 'touch', '/tmp/go');

      const run = await ended(runId);
      const logFile = join(w.logs, `${runId}.log`);
      expect(run, readFileSync(logFile, 'utf8')).toMatchObject({ origin: 'hosted', status: 'succeeded', stopReason: 'completed' });
      expect(run.cards.map((c) => [c.workItemKey, c.disposition, c.sessionBranch])).toEqual([[key, 'implemented', `svc/${key}`]]);
      expect(run.agentInstance).toMatchObject({ engine, name, image: IMAGE, state: 'exited', exitCode: 0, logs: logFile, error: null });
      // The branch is in the service's bare repository, at the agent's commit.
      const repo = repositoryPath(w.gitRoot, 'acme/widgets');
      expect(await git(repo, 'log', '-1', '--format=%s', `svc/${key}`)).toBe(`${key}: done`);
      // The agent ran as a uid of the reserved range (not root, not the image's old 10001) and could not read the credential.
      const said = await git(repo, 'show', `svc/${key}:card.txt`);
      expect(said).toMatch(new RegExp(`^work for ${key} as uid \\d+, credential refused$`));
      expect(inRange(Number(/uid (\d+)/.exec(said)?.[1]))).toBe(true);
      const log = readFileSync(logFile, 'utf8');
      expect(log).toContain(`${key}: pushed svc/${key}`);
      // The credential file went with the container; the credential died with the run.
      expect(existsSync(credentialFile)).toBe(false);
      const shown = await svcInProcess(['runs', 'show', runId], { env: w.personal });
      expect(shown.stdout).toContain(`runner ${engine} ${name} · exited 0 · logs ${logFile}`);

      // (Other processes of this machine are not ours to judge by token shape: the exact credential only.)
      expect(leaks(hostArgv, [credential]), 'argv of the host').toEqual([]);
      const texts = { inspect, containerArgv, pid1Env, log, shown: shown.stdout + shown.stderr };
      for (const [where, text] of Object.entries(texts)) {
        expect(leaks(text, [credential]), where).toEqual([]);
        for (const shape of TOKEN_SHAPES) expect(shape.test(text) ? where : null).toBeNull();
      }
    }, 180_000);

    it('a hostile agent in the runner gets no credential: not the file, no environ, no socket, not getGitCredential, no push to main (docs/hosted.md)', async () => {
      await createRepository(w.gitRoot, 'acme/target', { seedCommit: true });
      const mainBefore = await mainOf('acme/target');
      const script = readFileSync(join(import.meta.dirname, '../../fixtures/hosted/runner-attacker.sh'), 'utf8');
      const remote = `${w.server.url}/git/acme/target.git`;
      const s = await service(mkdtempSync(join(w.root, 'hostile-')), shellAgent(script, 'attacker', w.server.url, remote));
      try {
        const { open, ended: done } = hostedOn(s);
        const { key, runId } = await open({ type: 'code', title: 'Steal what the runner holds', repo: 'acme/target' });
        const credential = await until('the credential file', async () => {
          const f = readdirSync(join(w.root))
            .flatMap((d) => (d.startsWith('hostile-') ? [join(w.root, d, `${runId}.credential`)] : []))
            .find(existsSync);
          return f ? readFileSync(f, 'utf8') : undefined;
        });
        const run = await done(runId);
        expect(run).toMatchObject({ status: 'succeeded', stopReason: 'completed', agentInstance: { exitCode: 0 } });
        const report = await git(repositoryPath(w.gitRoot, 'acme/target'), 'show', `svc/${key}:attack.txt`);
        // Every attempt was made, and every one was refused.
        for (const what of ['token-file', 'environ', 'socket', 'credential-fill', 'op30', 'push'])
          expect(report, what).toMatch(new RegExp(`^CHECK ${what} `, 'm'));
        expect(report).toMatch(/^done$/m);
        expect(
          report.split('\n').filter((l) => / GOT /.test(l)),
          report,
        ).toEqual(
          // Its own processes' environments are its own, and hold no token.
          report.split('\n').filter((l) => /^CHECK environ \S+ GOT no token uid \d+/.test(l)),
        );
        expect(report).toMatch(/^CHECK token-file \S+ DENIED .*Permission denied/m);
        // svc's environment and its init's are refused by the kernel, not missed.
        const refused = report.split('\n').filter((l) => /^CHECK environ \S+ DENIED/.test(l));
        expect(refused.length).toBeGreaterThanOrEqual(2);
        for (const line of refused) expect(line).toMatch(/Permission denied/);
        expect(leaks(report, [credential])).toEqual([]);
        for (const shape of [/svc_run_/, /svc_pat_/, /ghs_/]) expect(report).not.toMatch(shape);
        expect(inRange(Number(/^uid (\d+)/m.exec(report)?.[1]))).toBe(true);
        expect(await mainOf('acme/target')).toBe(mainBefore);
      } finally {
        expect(await s.stop()).toEqual([]);
      }
    }, 240_000);

    it("a hosted leg is fenced inside the runner: no host listener, not the service's socket, no nft; the service (listed) directly and through svc's proxy; refusals in the runner's log", async () => {
      // A listener of the host's, on every address: its loopback and the runners' gateway.
      let reached = 0;
      const listener = createServer((c) => (reached++, c.destroy()));
      await new Promise<void>((done) => listener.listen(0, '0.0.0.0', done));
      const hostPort = (listener.address() as AddressInfo).port;
      const code = readFileSync(join(import.meta.dirname, '../../fixtures/hosted/runner-prober.cjs'), 'utf8');
      // A repository of its own: this second service's card keys are the suite service's again.
      await createRepository(w.gitRoot, 'acme/fenced', { seedCommit: true });
      const logs = mkdtempSync(join(w.root, 'fenced-'));
      // The agent is told its own service's URL: a port free now, taken by the service below.
      const free = createServer();
      await new Promise<void>((done) => free.listen(0, '127.0.0.1', done));
      const servicePort = (free.address() as AddressInfo).port;
      await new Promise((done) => free.close(done));
      const agent = shellAgent('exec node -e "$1" "$2" "$3"', 'prober', code, `http://127.0.0.1:${servicePort}`, String(hostPort));
      const s = await service(logs, agent, ['--port', String(servicePort)]);
      try {
        const { open, ended: done } = hostedOn(s);
        const { key, runId } = await open({ type: 'code', title: 'Reach past the fence', repo: 'acme/fenced' });
        const run = await done(runId);
        const log = readFileSync(join(logs, `${runId}.log`), 'utf8');
        // The runner's own svc reached the service and its git remote: cloned, pushed, closed.
        expect(run, log).toMatchObject({ status: 'succeeded', stopReason: 'completed' });
        const report = await git(repositoryPath(w.gitRoot, 'acme/fenced'), 'show', `svc/${key}:probe.txt`);
        expect(report).toMatch(/^done$/m);
        expect(s.url).toBe(`http://127.0.0.1:${servicePort}`);
        const verdicts = report
          .split('\n')
          .filter((l) => l.startsWith('CHECK '))
          .map((l) => l.split(' ').slice(1, 4).join(' '));
        expect(verdicts, report).toEqual([
          `tcp 127.0.0.1:${hostPort} REFUSED`,
          `tcp gateway:${hostPort} REFUSED`,
          // On the allowlist (the runner's service): a listed address is the kernel's to carry (docs/trust.md).
          `tcp service:${servicePort} REACHED`,
          `proxy-connect 127.0.0.1:${hostPort} 403`,
          // On the allowlist (the service is the git host): reached, and without a credential refused by the service itself.
          'proxy-http service 401',
          'nft list-ruleset REFUSED',
          'nft flush-ruleset REFUSED',
          'service-socket /run/svc-service/service.sock REFUSED',
        ]);
        expect(report).toMatch(/^CHECK service-socket \S+ REFUSED EACCES/m);
        expect(reached, 'connections the host listener took').toBe(0);
        // The run says its network, and every refusal is a line of the runner's log.
        expect(log).toContain(`network: fenced (legs reach 127.0.0.1:${servicePort}; nftables rules per agent uid)`);
        for (const refused of [`127.0.0.1:${hostPort} (kernel: tcp`, `127.0.0.1:${hostPort} (proxy: `])
          expect(log).toContain(`${key}: network: refused ${refused}`);
      } finally {
        listener.close();
        expect(await s.stop()).toEqual([]);
      }
    }, 240_000);

    it('a host leg of uids 10001-10005 (the image had 10001) reaches no runner process: no environ, no signal, and its kill -9 -1 leaves the runner running', async () => {
      const { key: hostedKey, runId } = await openHosted('A runner beside a host leg');
      const name = await runningAgent(runId);
      // What lives on: the processes there a second apart (a git or nft call of the runner's may end on its own).
      const first = await hostPids(name);
      await new Promise((r) => setTimeout(r, 1000));
      const pids = (await hostPids(name)).filter((pid) => first.includes(pid));
      // The init, svc and the agent at least (and, through the boundary, the leg's shell).
      expect(pids.length).toBeGreaterThanOrEqual(3);
      // Who they are on the host: under Podman's user namespace neither root nor a reserved uid
      // (both mapped away); under Docker root is the host's and the agent a reserved uid.
      const hostUids = pids.map((pid) => Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]));
      if (engine === 'podman') expect(hostUids.filter((uid) => uid === 0 || inRange(uid) || uid < 100_000)).toEqual([]);
      else expect([hostUids.includes(0), hostUids.some(inRange)]).toEqual([true, true]);
      // The host agent reads the pids from a file anyone may read.
      const shared = mkdtempSync(join(tmpdir(), 'svc-pids-'));
      chmodSync(shared, 0o755);
      writeFileSync(join(shared, 'pids'), `${pids.join('\n')}\n`, { mode: 0o644 });
      const probe = shellAgent(
        'for p in $(cat "$1"); do if head -c1 /proc/$p/environ >/dev/null 2>&1; then e=read; else e=denied; fi; if kill -0 $p 2>/dev/null; then k=signalled; else k=$(kill -0 $p 2>&1 | sed "s/.*: //"); fi; echo "$p $e $k"; done > probe.txt; id -u >> probe.txt; git add probe.txt; git -c user.name=h -c user.email=h@x commit -qm "$SVC_CARD_KEY: probe"',
        'probe',
        join(shared, 'pids'),
      );
      const made = await api('POST', '/projects/DEMO/work-items', { kind: 'task', type: 'code', title: 'A host leg' });
      const hostKey = (made.body.item ?? made.body).key as string;
      const repo = await makeRepo();
      const leg = await svcInProcess(['run', hostKey, '--agent-user', '10001-10005', '--agent-cmd', probe, '--repo', repo], { env: w.personal });
      expect(leg.code, leg.stderr).toBe(0);
      // The leg has ended (its uid's processes killed with kill -9 -1): every runner process lives on.
      expect(
        pids.filter((pid) => !existsSync(`/proc/${pid}`)),
        'runner processes gone',
      ).toEqual([]);
      const lines = (await git(repo, 'show', `svc/${hostKey}:probe.txt`)).split('\n');
      expect(Number(lines.pop())).toBeGreaterThanOrEqual(10001);
      expect(lines.map((l) => l.split(' ').slice(1).join(' '))).toEqual(pids.map(() => 'denied Operation not permitted'));
      await cli('exec', name, 'touch', '/tmp/go');
      const run = await ended(runId);
      expect(run).toMatchObject({ status: 'succeeded', stopReason: 'completed' });
      expect(run.cards.map((c) => [c.workItemKey, c.disposition])).toEqual([[hostedKey, 'implemented']]);
    }, 240_000);

    it("a runner that dies before closing its run leaves it closed failed with the runner's exit, never succeeded", async () => {
      const { runId } = await openHosted('Runner must die before closing the run');
      const name = await runningAgent(runId);
      await killSvc(name);
      const run = await ended(runId);
      expect(run).toMatchObject({ status: 'failed', stopReason: 'abandoned' });
      // (Its leg is `failed` or, when svc died before its `running` event was flushed, `not_reached`.)
      expect(run.cards.map((c) => c.disposition)).not.toContain('implemented');
      // svc killed by SIGKILL: the entry point's exit is 137 (the init passes the signal's status on).
      expect(run.agentInstance).toMatchObject({ engine, state: 'exited' });
      expect(run.agentInstance?.exitCode).not.toBe(0);
      expect(typeof run.agentInstance?.exitCode).toBe('number');
    }, 180_000);

    /** A second service whose runners' agent never ends, with one hosted run whose agent has started. */
    async function waitingRun(extra: string[]): Promise<{ service: LocalServer; runId: string }> {
      const s = await service(mkdtempSync(join(w.root, 'waiting-')), 'sleep 600', extra);
      const { call, open } = hostedOn(s);
      try {
        const { runId } = await open({ type: 'chore', title: 'Never ends', repo: 'acme/widgets' });
        // The agent is running once the runner reported its leg (seq ≥ 1), or the run already ended.
        await until("the runner's first event", async () => {
          const r = await call(`/dispatch-runs/${runId}`);
          return r.seq >= 1 || r.status !== 'running' ? true : undefined;
        });
        return { service: s, runId };
      } catch (error) {
        await s.stop();
        throw error;
      }
    }

    const stored = (db: string, runId: string) => {
      const d = new DatabaseSync(db);
      try {
        return {
          run: d.prepare('SELECT status, stop_reason FROM dispatch_runs WHERE id = ?').get(runId),
          runner: d.prepare('SELECT state, exit_code FROM hosted_runners WHERE run_id = ?').get(runId) as { state: string; exit_code: number | null },
        };
      } finally {
        d.close();
      }
    };

    it('stopping svc server stops its runners first: the run is closed interrupted while the service still answers', async () => {
      const { service: s, runId } = await waitingRun([]);
      expect(await s.stop()).toEqual([]);
      const { run, runner } = stored(s.db, runId);
      expect(run).toEqual({ status: 'cancelled', stop_reason: 'interrupted' });
      expect(runner.state).toBe('exited');
      expect(await exists(`svc-${runId}`)).toBe(false);
    }, 180_000);

    it('past --hosted-timeout the service closes the run timed_out and stops its runner', async () => {
      const { service: s, runId } = await waitingRun(['--hosted-timeout', '4s']);
      try {
        await until('the runner stopped at its deadline', async () => (stored(s.db, runId).runner.state === 'timed out' ? true : undefined), 60_000);
        const { run, runner } = stored(s.db, runId);
        expect(run).toEqual({ status: 'timed_out', stop_reason: 'abandoned' });
        expect(runner.exit_code).not.toBe(0);
        expect(await exists(`svc-${runId}`)).toBe(false);
      } finally {
        expect(await s.stop()).toEqual([]);
      }
    }, 180_000);
  });
}
