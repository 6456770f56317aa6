// A normal user's fence (docs/trust.md): each of the leg's programs runs in a network namespace
// of its own (bubblewrap `--unshare-net`: only `lo`), where a small bridge listens on a loopback
// port and carries each connection to the leg's proxy through a unix socket. Nothing else leaves
// the namespace: no other host, no DNS (names are resolved by the proxy), no svc listener. `none`:
// the namespace without the bridge. Probed once per process; where bwrap or user namespaces are
// missing the fence cannot be had, and the run is refused (run-options), never opened unfenced.
import { firstLine, run } from '../process/run.js';

/** The bridge, run by node inside the namespace: `node -e BRIDGE -- SOCKET PORT ARGV...`. */
const BRIDGE = `
const net = require('node:net');
const { spawn } = require('node:child_process');
const [socket, port, ...argv] = process.argv.slice(1);
const server = net.createServer((c) => {
  const u = net.connect(socket);
  c.on('error', () => u.destroy());
  u.on('error', () => c.destroy());
  c.pipe(u);
  u.pipe(c);
});
server.listen(Number(port), '127.0.0.1', () => {
  const child = spawn(argv[0], argv.slice(1), { stdio: 'inherit' });
  for (const s of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(s, () => child.kill(s));
  child.on('error', (e) => { process.stderr.write('svc fence: ' + argv[0] + ': ' + e.message + '\\n'); process.exit(127); });
  child.on('exit', (code, signal) => {
    if (signal) { process.removeAllListeners(signal); process.kill(process.pid, signal); }
    process.exit(code ?? 1);
  });
});
`;

/** The loopback port the bridge listens on inside each namespace (the namespace is the leg's alone). */
export const BRIDGE_PORT = 3128;

const NAMESPACE = ['--bind', '/', '/', '--dev-bind', '/dev', '/dev', '--proc', '/proc', '--unshare-net', '--die-with-parent'];

let probed: Promise<string | null> | null = null;

/** Null where a namespace of one's own can be had here; else why not (one line). */
export function probeBwrap(): Promise<string | null> {
  probed ??= run('bwrap', [...NAMESPACE, '--', 'true'], { timeoutMs: 10_000 }).then((r) => {
    if (r.code === 0) return null;
    if (r.errno === 'ENOENT') return 'bubblewrap (bwrap) is not installed';
    return `bwrap cannot make a network namespace here: ${firstLine(r)}`;
  });
  return probed;
}

/** `argv` in a namespace of its own, bridged to the proxy at `socket` (null: no network at all). */
export function inNamespace(argv: readonly string[], socket: string | null): string[] {
  if (!socket) return ['bwrap', ...NAMESPACE, '--', ...argv];
  return ['bwrap', ...NAMESPACE, '--', process.execPath, '-e', BRIDGE, '--', socket, String(BRIDGE_PORT), ...argv];
}
