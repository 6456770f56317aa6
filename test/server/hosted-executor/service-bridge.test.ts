// The service bridge of a runner, both halves in this process (docs/hosted.md, "Networking"): the
// executor's socket (server/hosted-executor/service-bridge.ts) piped to a service on loopback, and
// the runner's svc forwarding SVC_BASE_URL's loopback address to that socket
// (dispatch/hosted/service-forward.ts). The real containers run it in runner-suite.ts.
import { existsSync, mkdtempSync, statSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { forwardService } from '../../../src/dispatch/hosted/service-forward.js';
import { loopbackTarget, startServiceBridge } from '../../../src/server/hosted-executor/service-bridge.js';

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A port free now on 127.0.0.1. */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((done) => s.listen(0, '127.0.0.1', done));
  const { port } = s.address() as AddressInfo;
  await new Promise((done) => s.close(done));
  return port;
}

/** A stand-in service on loopback that says which path it was asked for. */
async function service(): Promise<{ port: number; server: Server }> {
  const server = createHttpServer((req, res) => res.end(`service saw ${req.method} ${req.url}`));
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  cleanups.push(() => new Promise((done) => server.close(done)));
  return { port: (server.address() as AddressInfo).port, server };
}

describe('the service bridge of a runner', () => {
  it("carries the runner's requests on its own loopback address to the service, through a socket in a 0700 folder removed at close", async () => {
    const { port } = await service();
    const logs = mkdtempSync(join(tmpdir(), 'svc-bridge-test-'));
    const bridge = await startServiceBridge({ host: '127.0.0.1', port }, logs, 'run_1');
    cleanups.push(() => bridge.close());
    expect(bridge.dir).toBe(join(logs, 'run_1.service'));
    expect(statSync(bridge.dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(bridge.dir, 'service.sock')).isSocket()).toBe(true);
    // In a runner the forward takes the service's own port; here that one is the service's, so another.
    const inside = `http://127.0.0.1:${await freePort()}`;
    const forward = await forwardService({ SVC_SERVICE_SOCKET: join(bridge.dir, 'service.sock') }, inside);
    cleanups.push(() => forward?.close());
    const answer = await fetch(`${inside}/api/v1/dispatch-runs/run_1`);
    expect(await answer.text()).toBe('service saw GET /api/v1/dispatch-runs/run_1');
    await forward!.close();
    await expect(fetch(`${inside}/api/v1/x`)).rejects.toThrow();
    await bridge.close();
    expect(existsSync(bridge.dir)).toBe(false);
  });

  it('goes to a folder of the temp folder when the one beside the logs is too long for a socket', async () => {
    const { port } = await service();
    const deep = mkdtempSync(join(tmpdir(), `svc-bridge-${'x'.repeat(100)}-`));
    const bridge = await startServiceBridge({ host: '127.0.0.1', port }, deep, 'run_1');
    cleanups.push(() => bridge.close());
    expect(bridge.dir.startsWith(join(tmpdir(), 'svc-service-'))).toBe(true);
    expect(statSync(bridge.dir).mode & 0o777).toBe(0o700);
    await bridge.close();
    expect(existsSync(bridge.dir)).toBe(false);
  });

  it('is for loopback services only: another host is reached over the runner’s network', () => {
    expect(loopbackTarget('http://127.0.0.1:8787')).toEqual({ host: '127.0.0.1', port: 8787 });
    expect(loopbackTarget('http://localhost:8787/')).toEqual({ host: '127.0.0.1', port: 8787 });
    expect(loopbackTarget('http://[::1]:8787')).toEqual({ host: '::1', port: 8787 });
    expect(loopbackTarget('https://127.0.0.2')).toEqual({ host: '127.0.0.2', port: 443 });
    expect(loopbackTarget('http://10.0.0.5:8787')).toBeNull();
    expect(loopbackTarget('http://svc.example.test')).toBeNull();
    expect(loopbackTarget('not a url')).toBeNull();
  });
});

describe("the runner's forward: refused in one line", () => {
  it('needs nothing without SVC_SERVICE_SOCKET', async () => {
    expect(await forwardService({}, 'http://127.0.0.1:8787')).toBeNull();
  });

  it('a base URL that is not loopback, a socket that is not there, a port already taken', async () => {
    const sock = join(mkdtempSync(join(tmpdir(), 'svc-forward-')), 'service.sock');
    await expect(forwardService({ SVC_SERVICE_SOCKET: sock }, 'http://10.0.0.5:8787')).rejects.toThrow(
      "SVC_SERVICE_SOCKET is set but the service's URL http://10.0.0.5:8787 is not a loopback http URL to forward it on",
    );
    await expect(forwardService({ SVC_SERVICE_SOCKET: sock }, 'http://127.0.0.1:8787')).rejects.toThrow(
      `SVC_SERVICE_SOCKET: no socket at ${sock} (the executor mounts the service's there)`,
    );
    const { port } = await service();
    const bridge = await startServiceBridge({ host: '127.0.0.1', port }, mkdtempSync(join(tmpdir(), 'svc-bridge-test-')), 'run_2');
    cleanups.push(() => bridge.close());
    await expect(forwardService({ SVC_SERVICE_SOCKET: join(bridge.dir, 'service.sock') }, `http://127.0.0.1:${port}`)).rejects.toThrow(
      new RegExp(`^cannot forward the service on 127\\.0\\.0\\.1:${port} \\(listen EADDRINUSE`),
    );
  });
});
