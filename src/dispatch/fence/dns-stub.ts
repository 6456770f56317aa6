// svc's resolver for one leg (docs/trust.md): the kernel sends the leg's DNS (UDP port 53, to
// whatever server) here, and it answers only names on the allowlist, with the IPv4 answers the
// allowlist permits (inside addresses only where listed); every other name is NXDOMAIN and a
// refusal. AAAA gets no answer (IPv6 is closed to a fenced leg); TCP DNS is not answered at all.
import { createSocket, type RemoteInfo } from 'node:dgram';
import { lookup } from 'node:dns/promises';
import type { AddressInfo } from 'node:net';
import type { Allowlist } from './allowlist.js';
import type { Refusal } from './refusal.js';

export interface DnsStub {
  port: number;
  close(): Promise<void>;
}

/** A name's IPv4 addresses, as the system's resolver gives them (empty: none). */
export type LookupName = (name: string) => Promise<string[]>;

const systemLookup: LookupName = (name) =>
  lookup(name, { all: true, family: 4 }).then(
    (found) => found.map((a) => a.address),
    () => [],
  );

const TYPE_A = 1;
export const TTL_S = 30;

/** The question of a query: its name as bytes made text (null: not one name), its type, where it ends. */
export function readQuestion(msg: Buffer): { name: string | null; raw: string; type: number; end: number } | null {
  if (msg.length < 12 || msg.readUInt16BE(4) !== 1) return null;
  const labels: string[] = [];
  let at = 12;
  let clean = true;
  for (;;) {
    const len = msg[at];
    if (len === undefined || len > 63) return null;
    at++;
    if (len === 0) break;
    if (at + len > msg.length) return null;
    const label = msg.subarray(at, at + len).toString('latin1');
    if (!/^[A-Za-z0-9_-]+$/.test(label)) clean = false;
    labels.push(label);
    at += len;
  }
  if (at + 4 > msg.length) return null;
  const raw = labels.join('.');
  return { name: clean && raw ? raw.toLowerCase() : null, raw, type: msg.readUInt16BE(at), end: at + 4 };
}

/** The answer to `query` (its question echoed): rcode, and A records for `addresses`. */
export function answer(query: Buffer, end: number, rcode: number, addresses: string[]): Buffer {
  const head = Buffer.from(query.subarray(0, end));
  head.writeUInt16BE(0x8000 | (query.readUInt16BE(2) & 0x0100) | 0x0080 | rcode, 2);
  head.writeUInt16BE(1, 4);
  head.writeUInt16BE(addresses.length, 6);
  head.writeUInt32BE(0, 8);
  const records = addresses.map((a) => {
    const r = Buffer.alloc(16);
    r.writeUInt16BE(0xc00c, 0);
    r.writeUInt16BE(TYPE_A, 2);
    r.writeUInt16BE(1, 4);
    r.writeUInt32BE(TTL_S, 6);
    r.writeUInt16BE(4, 10);
    a.split('.').forEach((o, i) => r.writeUInt8(Number(o), 12 + i));
    return r;
  });
  return Buffer.concat([head, ...records]);
}

/**
 * Starts the resolver of one leg on 127.0.0.1; `onRefused` hears every name it would not answer,
 * and `onAnswer` each answer before it is sent (the kernel opening its addresses: direct.ts), a
 * failure of it a SERVFAIL.
 */
export async function startDnsStub(
  allow: Allowlist,
  onRefused: (r: Omit<Refusal, 'count'>) => void,
  onAnswer?: (name: string, addresses: string[]) => Promise<void>,
  lookupName: LookupName = systemLookup,
): Promise<DnsStub> {
  const socket = createSocket('udp4');
  const reply = (buf: Buffer, to: RemoteInfo) => socket.send(buf, to.port, to.address, () => undefined);
  socket.on('message', async (msg, from) => {
    const q = readQuestion(msg);
    if (!q) return;
    if (!q.name || !allow.allowsName(q.name, null)) {
      onRefused({ host: q.name ?? q.raw, port: null, how: q.name ? 'dns: not on the allowlist' : 'dns: not a host name' });
      return reply(answer(msg, q.end, 3, []), from);
    }
    if (q.type !== TYPE_A) return reply(answer(msg, q.end, 0, []), from);
    const found = await lookupName(q.name);
    const usable = found.filter((a) => allow.allowsAnswer(a, null));
    if (found.length && !usable.length) onRefused({ host: q.name, port: null, how: `dns: resolves to ${found[0]}, an inside address off the allowlist` });
    if (!usable.length) return reply(answer(msg, q.end, 3, []), from);
    const opened = await (onAnswer?.(q.name, usable) ?? Promise.resolve()).then(
      () => true,
      () => false,
    );
    reply(opened ? answer(msg, q.end, 0, usable) : answer(msg, q.end, 2, []), from);
  });
  await new Promise<void>((ok, fail) => {
    socket.once('error', fail);
    socket.bind(0, '127.0.0.1', ok);
  });
  return {
    port: (socket.address() as AddressInfo).port,
    close: () => new Promise<void>((done) => socket.close(() => done())),
  };
}
