// `ports: N`: each leg gets N ports of its own, `SVC_PORT` the first, distinct across the legs of a
// run and across svc processes on the machine. The lock is the kernel's: for each port svc holds an
// abstract unix socket named after it (Linux), which no other process can bind while svc lives and
// which goes away with svc however it ends (kill -9 included), so no lock file can go stale. Each
// port is also checked free on loopback, so a port some other program listens on is passed over.
// The abstract namespace belongs to the network namespace, as the ports do: a container has both
// of its own. Where there is no abstract namespace (not Linux), the ports are distinct within this
// process and checked free, which is all the platform offers without lock files.
import { createServer, type Server } from 'node:net';

/** The range ports are handed out from: above the usual dev-server defaults, below the ephemeral range. */
export const PORT_RANGE = { first: 20_000, end: 30_000 } as const;

/** A leg's block of ports, held until `release()`. */
export interface PortBlock {
  first: number;
  count: number;
  release(): void;
}

const heldHere = new Set<number>();
const abstract = process.platform === 'linux';

function listen(server: Server, options: { path: string } | { port: number; host: string; exclusive: true }): Promise<boolean> {
  return new Promise((done) => {
    server.once('error', () => done(false));
    server.listen(options, () => done(true));
  });
}

/** Holds the machine-wide lock of `port`, or null when another svc (or this one) holds it. */
async function lockPort(port: number): Promise<Server | null> {
  // Marked before the first await: two legs of this process asking at once cannot both win.
  if (heldHere.has(port)) return null;
  heldHere.add(port);
  const server = createServer();
  if (abstract && !(await listen(server, { path: `\0svc-port-${port}` }))) {
    heldHere.delete(port);
    return null;
  }
  server.unref();
  return server;
}

/** Whether nothing listens on `port` on loopback now. */
async function isFree(port: number): Promise<boolean> {
  const probe = createServer();
  const ok = await listen(probe, { port, host: '127.0.0.1', exclusive: true });
  if (ok) await new Promise((done) => probe.close(done));
  return ok;
}

/** Reserves `count` consecutive ports; throws when the range has no such block free. */
export async function reservePorts(count: number, range: { first: number; end: number } = PORT_RANGE): Promise<PortBlock> {
  for (let start = range.first; start + count <= range.end; start += count) {
    const locks: Server[] = [];
    let ok = true;
    for (let port = start; port < start + count && ok; port++) {
      const lock = await lockPort(port);
      if (lock) locks.push(lock);
      ok = lock !== null && (await isFree(port));
    }
    const drop = () => {
      for (const [i, lock] of locks.entries()) {
        heldHere.delete(start + i);
        if (lock.listening) lock.close();
      }
    };
    if (ok) return { first: start, count, release: drop };
    drop();
  }
  throw new Error(`no block of ${count} free ports between ${range.first} and ${range.end - 1}`);
}
