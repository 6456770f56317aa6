// What the kernel lets a fenced leg reach without the proxy (src/dispatch/fence/direct.ts): the
// allowlist's own addresses, and the resolver's public answers for a listed name on its ports,
// opened before the answer is sent; never an inside answer of a name.
import { createSocket } from 'node:dgram';
import { describe, expect, it } from 'vitest';
import { Allowlist } from '../../../src/dispatch/fence/allowlist.js';
import { answerEntries, DirectAnswers, listedAddresses, type DirectEntry } from '../../../src/dispatch/fence/direct.js';
import { startDnsStub } from '../../../src/dispatch/fence/dns-stub.js';

describe('what a leg reaches without the proxy', () => {
  const allow = Allowlist.parse(['api.example.com:443', 'api.example.com:8443', '*.cdn.test', '93.184.216.34:80', '127.0.0.2', '[::1]:80', 'localhost']);
  const listed = listedAddresses(allow);

  it('is each listed IPv4 address on its port', () => {
    expect(listed).toEqual([
      { address: '93.184.216.34', port: 80 },
      { address: '127.0.0.2', port: null },
    ]);
  });

  it("is a name's public IPv4 answers on the name's ports, never an inside or IPv6 answer", () => {
    expect(answerEntries(allow, 'api.example.com', ['198.51.100.7', '127.0.0.1', '10.0.0.1', '169.254.169.254', '2001:db8::1'], listed)).toEqual([
      { address: '198.51.100.7', port: 443 },
      { address: '198.51.100.7', port: 8443 },
    ]);
    expect(answerEntries(allow, 'a.cdn.test', ['198.51.100.8'], listed)).toEqual([{ address: '198.51.100.8', port: null }]);
    // A listed inside address is reachable on its own list entry only, never because a name points there.
    expect(answerEntries(allow, 'localhost', ['127.0.0.1', '127.0.0.2'], listed)).toEqual([]);
    // An answer listed itself on another port: the name's ports besides.
    expect(answerEntries(allow, 'api.example.com', ['93.184.216.34'], listed)).toEqual([
      { address: '93.184.216.34', port: 443 },
      { address: '93.184.216.34', port: 8443 },
    ]);
  });

  it('asks nft again only for an answer that would close before the resolver’s TTL runs out', async () => {
    const calls: DirectEntry[][] = [];
    const answers = new DirectAnswers(async (entries) => void calls.push([...entries]), 30);
    const e = { address: '198.51.100.7', port: 443 };
    await answers.admit([e], 0);
    await answers.admit([e], 20_000);
    expect(calls).toEqual([[e]]);
    await answers.admit([e, { address: '198.51.100.9', port: 443 }], 31_000);
    expect(calls).toEqual([[e], [e, { address: '198.51.100.9', port: 443 }]]);
  });
});

describe("the resolver's answers", () => {
  const ask = (port: number, name: string) =>
    new Promise<Buffer>((done) => {
      const q = Buffer.concat([
        Buffer.from([0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0]),
        ...name.split('.').map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)])),
        Buffer.from([0, 0, 1, 0, 1]),
      ]);
      const s = createSocket('udp4');
      s.on('message', (m) => (s.close(), done(m)));
      s.send(q, port, '127.0.0.1');
    });
  const rcode = (m: Buffer) => m.readUInt16BE(2) & 0xf;

  it('go out only once the kernel has opened them, and a failure to open them is a SERVFAIL', async () => {
    const events: string[] = [];
    let fail = false;
    const stub = await startDnsStub(
      Allowlist.parse(['localhost', '127.0.0.1']),
      () => undefined,
      async (name, addresses) => {
        events.push(`open ${name} ${addresses.join(',')}`);
        await new Promise((r) => setTimeout(r, 20));
        if (fail) throw new Error('nft said no');
        events.push('opened');
      },
    );
    try {
      const ok = await ask(stub.port, 'localhost');
      events.push('answered');
      expect(rcode(ok)).toBe(0);
      expect(events).toEqual(['open localhost 127.0.0.1', 'opened', 'answered']);
      fail = true;
      const failed = await ask(stub.port, 'localhost');
      expect(rcode(failed)).toBe(2);
      expect(failed.readUInt16BE(6)).toBe(0);
    } finally {
      await stub.close();
    }
  });
});
