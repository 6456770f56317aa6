// The fence's allowlist, proxy and resolver in-process (src/dispatch/fence/): canonical names,
// what matches, and what the proxy and the resolver refuse, against listeners on loopback.
import { createSocket } from 'node:dgram';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Allowlist, canonicalHost, parseAllowEntry } from '../../../src/dispatch/fence/allowlist.js';
import { answer, readQuestion, startDnsStub } from '../../../src/dispatch/fence/dns-stub.js';
import { startLegProxy } from '../../../src/dispatch/fence/proxy.js';
import { refusalLine, type Refusal } from '../../../src/dispatch/fence/refusal.js';

describe('canonical host names', () => {
  it.each([
    ['API.Anthropic.COM.', 'api.anthropic.com'],
    ['0x7f.1', '127.0.0.1'],
    ['[::1]', '::1'],
    ['bücher.example', 'xn--bcher-kva.example'],
  ])('%s is %s', (raw, canonical) => expect(canonicalHost(raw)).toBe(canonical));

  it.each(['host\0.allowed.test', 'host\n.allowed.test', 'host%00.allowed.test', 'user@allowed.test', 'a/b', '', 'a..b', 'host\x7f.test'])(
    '%j is not a host',
    (raw) => expect(canonicalHost(raw)).toBeNull(),
  );
});

describe('the allowlist', () => {
  const allow = Allowlist.parse(['api.example.com', '*.allowed.test', '127.0.0.2', 'git.example.com:443', '[::1]:8080']);
  it.each([
    ['api.example.com', 1234, true],
    ['a.allowed.test', 443, true],
    ['allowed.test', 443, false],
    ['evilallowed.test', 443, false],
    ['127.0.0.2', 80, true],
    ['127.0.0.3', 80, false],
    ['git.example.com', 443, true],
    ['git.example.com', 22, false],
    ['::1', 8080, true],
  ] as const)('%s:%s allowed: %s', (host, port, ok) => expect(allow.allowsName(host, port)).toBe(ok));

  it('takes an inside answer only where the address itself is listed', () => {
    expect(allow.allowsAnswer('93.184.216.34', 443)).toBe(true);
    expect(allow.allowsAnswer('127.0.0.1', 443)).toBe(false);
    expect(allow.allowsAnswer('10.0.0.1', 443)).toBe(false);
    expect(allow.allowsAnswer('169.254.169.254', 80)).toBe(false);
    expect(allow.allowsAnswer('::ffff:127.0.0.1', 80)).toBe(false);
    expect(allow.allowsAnswer('127.0.0.2', 80)).toBe(true);
  });

  it.each(['host\0.test', '*.127.0.0.1', 'a.test:0', 'a.test:70000', 'http://a.test'])('refuses the entry %j in one line', (entry) => {
    expect(() => parseAllowEntry(entry)).toThrow(/^not a host to allow: .*\(.*\)$/);
  });
});

describe('the proxy and the resolver', () => {
  let target: Server;
  let port = 0;
  const refused: Omit<Refusal, 'count'>[] = [];
  const allow = Allowlist.parse(['127.0.0.2', '*.allowed.test', 'localhost']);
  let proxy: Awaited<ReturnType<typeof startLegProxy>>;

  beforeAll(async () => {
    target = createServer((req, res) => res.end(`saw ${req.headers['proxy-authorization'] ?? 'no proxy credential'}`));
    await new Promise<void>((ok) => target.listen(0, '127.0.0.2', ok));
    port = (target.address() as AddressInfo).port;
    proxy = await startLegProxy(allow, (r) => refused.push(r));
  });
  afterAll(async () => {
    await proxy.close();
    target.close();
  });

  /** Sends raw bytes to the proxy; the first chunk of its answer. */
  const raw = (bytes: string) =>
    new Promise<string>((done) => {
      const s = connect(proxy.port, '127.0.0.1', () => s.write(Buffer.from(bytes, 'latin1')));
      let got = '';
      s.on('data', (d) => (got += d.toString('latin1')));
      s.on('close', () => done(got));
      s.on('error', () => done(got));
      setTimeout(() => s.destroy(), 5_000);
    });

  it('forwards plain HTTP to an allowed address without the proxy credential', async () => {
    const got = await raw(
      `GET http://127.0.0.2:${port}/x HTTP/1.1\r\nHost: 127.0.0.2:${port}\r\nProxy-Authorization: Basic c2VjcmV0\r\nConnection: close\r\n\r\n`,
    );
    expect(got).toMatch(/^HTTP\/1.1 200/);
    expect(got).toContain('saw no proxy credential');
  });

  it('cuts an answer short for the client when the server cut it short, never leaving it open', async () => {
    // The server promises 100 bytes, sends 4 and resets: the client must see the end at once.
    const cutting = createServer((_req, res) => {
      res.writeHead(200, { 'content-length': '100' });
      res.write('half');
      setTimeout(() => res.socket?.destroy(), 50);
    });
    await new Promise<void>((ok) => cutting.listen(0, '127.0.0.2', ok));
    const at = (cutting.address() as AddressInfo).port;
    const started = Date.now();
    const got = await raw(`GET http://127.0.0.2:${at}/ HTTP/1.1\r\nHost: 127.0.0.2:${at}\r\n\r\n`);
    cutting.close();
    expect(got).toMatch(/^HTTP\/1.1 200[\s\S]*half$/);
    // raw() gives up after 5 s; the proxy's own close comes long before.
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('tunnels CONNECT to an allowed address', async () => {
    const got = await raw(`CONNECT 127.0.0.2:${port} HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect(got).toMatch(/^HTTP\/1.1 200 Connection Established/);
    expect(got).toContain('saw no proxy credential');
  });

  it.each([
    [`CONNECT 127.0.0.3:${443} HTTP/1.1\r\n\r\n`, '403', { host: '127.0.0.3', port: 443, how: 'proxy: not on the allowlist' }],
    ['CONNECT host\0.allowed.test:443 HTTP/1.1\r\n\r\n', '400', { host: 'host\0.allowed.test', port: 443, how: 'proxy: malformed request' }],
    ['CONNECT host%00.allowed.test:443 HTTP/1.1\r\n\r\n', '400', { host: 'host%00.allowed.test', port: 443, how: 'proxy: not a host name' }],
    [
      'GET http://user:pw@127.0.0.1:9/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
      '403',
      { host: '127.0.0.1', port: 9, how: 'proxy: not on the allowlist' },
    ],
    ['CONNECT localhost:9 HTTP/1.1\r\n\r\n', '403', { host: 'localhost', port: 9, how: 'proxy: resolves to 127.0.0.1, an inside address off the allowlist' }],
  ])('refuses %j (%s) and says so', async (request, status, refusal) => {
    refused.length = 0;
    const got = await raw(request);
    expect(got).toMatch(new RegExp(`^HTTP/1.1 ${status}`));
    expect(refused).toEqual([refusal]);
    expect(refusalLine(refusal)).not.toMatch(/[\0\n]|pw/);
  });

  it('answers only allowlisted names, and no name with a NUL in it', async () => {
    const names: Omit<Refusal, 'count'>[] = [];
    const stub = await startDnsStub(Allowlist.parse(['*.allowed.test', 'localhost', '127.0.0.1']), (r) => names.push(r));
    const ask = (labels: string[], type = 1) =>
      new Promise<Buffer>((done) => {
        const q = Buffer.concat([
          Buffer.from([0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0]),
          ...labels.map((l) => Buffer.concat([Buffer.from([Buffer.byteLength(l, 'latin1')]), Buffer.from(l, 'latin1')])),
          Buffer.from([0, 0, type, 0, 1]),
        ]);
        const s = createSocket('udp4');
        s.on('message', (m) => (s.close(), done(m)));
        s.send(q, stub.port, '127.0.0.1');
      });
    const rcode = (m: Buffer) => m.readUInt16BE(2) & 0xf;
    expect(rcode(await ask(['not-listed', 'example']))).toBe(3);
    expect(rcode(await ask(['host\0', 'allowed', 'test']))).toBe(3);
    const local = await ask(['localhost']);
    expect(rcode(local)).toBe(0);
    expect(local.readUInt16BE(6)).toBe(1);
    expect([...local.subarray(local.length - 4)]).toEqual([127, 0, 0, 1]);
    expect(names).toEqual([
      { host: 'not-listed.example', port: null, how: 'dns: not on the allowlist' },
      { host: 'host\0.allowed.test', port: null, how: 'dns: not a host name' },
    ]);
    await stub.close();
    const q = answer(Buffer.from([0, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1]), 17, 0, []);
    expect(readQuestion(q)?.type).toBe(1);
  });
});
