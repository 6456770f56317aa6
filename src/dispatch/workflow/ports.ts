// `ports: N`: each leg gets N consecutive ports of its own, `SVC_PORT` the first, distinct across the
// legs of a run and across svc processes on the machine. Each port is leased by a file named after
// it in a folder only svc can write (../state/lease.ts): as root, root's own 0700 folder
// (/run/svc-ports, or /tmp/svc-ports without /run), which no agent can enter, so none can take,
// remove or read a lease, or squat on the range by holding names svc would look for; otherwise
// svc's state folder. A lease holds its owner's pid and start time, so one whose svc died (kill -9)
// is taken over. Each leased port is also checked free on loopback, so a port some other program
// listens on is passed over. An agent can still bind a free port of the range (ports are the
// kernel's to give, not svc's), so a leg looks at its block again before its steps run and around
// its check: a port of the block held by someone else fails the leg with that reason, rather than
// letting a stranger answer its check.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { dropLease, ownPrivateFolder, takeLease } from '../state/lease.js';
import { makeDirs } from '../state/make-dirs.js';

/** The range ports are handed out from: above the usual dev-server defaults, below the ephemeral range. */
export const PORT_RANGE = { first: 20_000, end: 30_000 } as const;

/** Where root keeps its port leases: root's own folder under /run, else under /tmp (a container without /run). */
const ROOT_LEASES = ['/run/svc-ports', '/tmp/svc-ports'];

/** A leg's block of ports, held until `release()`. */
export interface PortBlock {
  first: number;
  count: number;
  /**
   * Why the block is not the leg's alone now (`port N is already in use by another process`), or
   * null. `ownUid`: the leg's uid, whose own sockets are its own; null: any socket is a stranger's.
   */
  inUse(ownUid: number | null): Promise<string | null>;
  release(): void;
}

/** The folder of port leases: root's own as root, else `ports/` in svc's state folder. */
export function portLeaseDir(stateDir: string): string {
  if (process.getuid?.() === 0) {
    try {
      return ownPrivateFolder(ROOT_LEASES);
    } catch (error) {
      throw new Error(`cannot keep port leases: ${(error as Error).message}`);
    }
  }
  makeDirs(stateDir, 0o700);
  return ownPrivateFolder([join(stateDir, 'ports')]);
}

function listen(server: Server, options: { port: number; host: string; exclusive: true }): Promise<boolean> {
  return new Promise((done) => {
    server.once('error', () => done(false));
    server.listen(options, () => done(true));
  });
}

/** Whether nothing listens on `port` on loopback now. */
async function isFree(port: number): Promise<boolean> {
  const probe = createServer();
  const ok = await listen(probe, { port, host: '127.0.0.1', exclusive: true });
  if (ok) await new Promise((done) => probe.close(done));
  return ok;
}

/** TCP states of a socket that holds its port: 0A listening, 07 bound and not connected. TIME_WAIT (06) holds nothing. */
const HOLDING_TCP = new Set(['0A', '07']);

/**
 * The uids of the sockets bound to each port of [first, first + count), from the kernel's tables
 * (the caller's network namespace); null where there is no /proc.
 */
function socketOwners(first: number, count: number): Map<number, number[]> | null {
  const owners = new Map<number, number[]>();
  let read = 0;
  for (const table of ['tcp', 'tcp6', 'udp', 'udp6']) {
    let text: string;
    try {
      text = readFileSync(`/proc/net/${table}`, 'utf8');
      read++;
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid …
      const f = line.trim().split(/\s+/);
      if (f.length < 8 || (table.startsWith('tcp') && !HOLDING_TCP.has(f[3]!))) continue;
      const port = Number.parseInt(f[1]!.slice(f[1]!.lastIndexOf(':') + 1), 16);
      if (port < first || port >= first + count) continue;
      owners.set(port, [...(owners.get(port) ?? []), Number(f[7])]);
    }
  }
  return read ? owners : null;
}

async function strangerOn(first: number, count: number, ownUid: number | null): Promise<string | null> {
  const owners = socketOwners(first, count);
  for (let port = first; port < first + count; port++) {
    const uids = owners?.get(port) ?? [];
    // Without /proc, only a bind tells, and only before the leg's own sockets exist.
    const held = owners ? uids.some((uid) => uid !== ownUid) : ownUid === null && !(await isFree(port));
    if (held) return `port ${port} is already in use by another process`;
  }
  return null;
}

/**
 * Reserves `count` consecutive ports, each leased in `dir` (or `portLeaseDir(stateDir)`), free on
 * loopback and bound by nobody on any address; throws when the range has no such block.
 */
export async function reservePorts(
  count: number,
  opts: { dir: string; range?: { first: number; end: number } } | { stateDir: string; range?: { first: number; end: number } },
): Promise<PortBlock> {
  const range = opts.range ?? PORT_RANGE;
  const dir = 'dir' in opts ? opts.dir : portLeaseDir(opts.stateDir);
  for (let start = range.first; start + count <= range.end; start += count) {
    const leased: number[] = [];
    const drop = () => {
      for (const port of leased.splice(0)) dropLease(dir, String(port));
    };
    let ok = true;
    for (let port = start; port < start + count && ok; port++) {
      ok = takeLease(dir, String(port)) !== false;
      if (ok) leased.push(port);
      ok = ok && (await isFree(port));
    }
    // Bound on another address (::1, a LAN address) is taken too: the leg's own look would fail it.
    ok = ok && (await strangerOn(start, count, null)) === null;
    if (ok) return { first: start, count, inUse: (ownUid) => strangerOn(start, count, ownUid), release: drop };
    drop();
  }
  throw new Error(`no block of ${count} free ports between ${range.first} and ${range.end - 1}`);
}
