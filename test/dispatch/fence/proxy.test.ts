// The fence proxy's fast paths (src/dispatch/fence/proxy.ts): a name asked for again within a
// moment is not looked up again, yet its answer is still held to each leg's allowlist; a tunnel
// carries a large answer byte for byte and ends when the server ends.
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

const lookups = vi.hoisted(() => ({ count: 0 }));
vi.mock('node:dns/promises', async (real) => {
  const dns = await real<typeof import('node:dns/promises')>();
  return {
    ...dns,
    lookup: (...args: Parameters<typeof dns.lookup>) => {
      lookups.count++;
      return dns.lookup(...args);
    },
  };
});

// The suite's workers are shared by files (isolate: false): modules another file loaded with the
// real lookup are loaded again, so that the mock above is what they import.
vi.resetModules();
const { Allowlist } = await import('../../../src/dispatch/fence/allowlist.js');
const { resolveTarget, startLegProxy } = await import('../../../src/dispatch/fence/proxy.js');

describe('the proxy looking names up', () => {
  it('looks a name up once for requests a moment apart, and checks the answer for each leg every time', async () => {
    const before = lookups.count;
    const inside = Allowlist.parse(['localhost', '127.0.0.1']);
    for (let i = 0; i < 5; i++) expect(await resolveTarget(inside, 'localhost', 80)).toMatchObject({ ok: true, address: '127.0.0.1' });
    expect(lookups.count - before).toBe(1);
    // The same answer, from the cache, for a leg whose list holds the name but not its loopback address.
    const byName = await resolveTarget(Allowlist.parse(['localhost']), 'localhost', 80);
    expect(byName).toMatchObject({ ok: false, status: 403, refusal: { how: expect.stringContaining('an inside address off the allowlist') } });
    expect(lookups.count - before).toBe(1);
  });
});

describe('a tunnel', () => {
  const BIG = 16 * 1024 * 1024;
  const body = Buffer.alloc(BIG);
  for (let i = 0; i < BIG; i += 4) body.writeUInt32LE((i * 2654435761) >>> 0, i);
  let target: Server;
  let port = 0;
  let proxy: Awaited<ReturnType<typeof startLegProxy>>;

  beforeAll(async () => {
    target = createServer((_req, res) => res.end(body));
    await new Promise<void>((ok) => target.listen(0, '127.0.0.2', ok));
    port = (target.address() as AddressInfo).port;
    proxy = await startLegProxy(Allowlist.parse(['127.0.0.2']), () => undefined);
  });
  afterAll(async () => {
    await proxy.close();
    target.close();
  });

  it('carries a large answer to a slow reader byte for byte, and ends when the server ends', async () => {
    const got = await new Promise<Buffer>((done, fail) => {
      const s = connect(proxy.port, '127.0.0.1', () =>
        s.write(`CONNECT 127.0.0.2:${port} HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`),
      );
      const chunks: Buffer[] = [];
      // Pauses now and then, so the proxy's reads of the server wait for the client's drain.
      s.on('data', (d: Buffer) => {
        chunks.push(d);
        if (chunks.length % 4 === 0) {
          s.pause();
          setTimeout(() => s.resume(), 10);
        }
      });
      s.on('end', () => done(Buffer.concat(chunks)));
      s.on('error', fail);
    });
    const text = got.toString('latin1');
    expect(text).toMatch(/^HTTP\/1.1 200 Connection Established\r\n\r\nHTTP\/1.1 200 OK/);
    const answer = got.subarray(text.indexOf('\r\n\r\n', text.indexOf('HTTP/1.1 200 OK')) + 4);
    expect(answer.length).toBe(BIG);
    expect(createHash('sha256').update(answer).digest('hex')).toBe(createHash('sha256').update(body).digest('hex'));
  }, 20_000);
});

describe("a listening socket handed over (a namespace's, fence/bwrap.ts)", () => {
  const listening = async () => {
    const { createServer: netServer } = await import('node:net');
    const s = netServer();
    await new Promise<void>((ok) => s.listen(0, '127.0.0.1', ok));
    return s;
  };

  it("is served as the proxy itself is: a request through it is the proxy's, refusals and all", async () => {
    const refused: unknown[] = [];
    const proxy = await startLegProxy(Allowlist.parse(['127.0.0.2']), (r) => refused.push(r));
    const handed = await listening();
    proxy.accept(handed);
    const port = (handed.address() as AddressInfo).port;
    const answer = await new Promise<string>((done) => {
      const c = connect(port, '127.0.0.1', () => c.write('CONNECT 127.0.0.3:80 HTTP/1.1\r\nHost: 127.0.0.3:80\r\n\r\n'));
      let text = '';
      c.on('data', (d) => (text += d));
      c.on('close', () => done(text));
    });
    expect(answer).toMatch(/^HTTP\/1\.1 403 /);
    expect(refused).toEqual([{ host: '127.0.0.3', port: 80, how: 'proxy: not on the allowlist' }]);
    await proxy.close();
    expect(handed.listening).toBe(false);
  });

  it('after the proxy closed, or not a server at all, is closed and never served', async () => {
    const proxy = await startLegProxy(Allowlist.parse([]), () => {});
    await proxy.close();
    const late = await listening();
    proxy.accept(late);
    expect(late.listening).toBe(false);
    const socket = connect(1, '127.0.0.1');
    socket.on('error', () => {});
    proxy.accept(socket);
    expect(socket.destroyed).toBe(true);
  });
});
