// A normal user's fence (docs/trust.md): each of the leg's programs runs in a network namespace
// of its own (bubblewrap `--unshare-net`: only `lo`). A small launcher listens on a loopback port
// there and hands that listening socket to svc over node's IPC channel (the descriptor passes with
// SCM_RIGHTS), then starts the program: the program's connections to the proxy are accepted by svc
// itself, in the namespace, with no relay between (one would copy every byte twice more). Nothing
// else leaves the namespace: no other host, no DNS (names are resolved by the proxy), no svc
// listener. `none`: the namespace without the launcher. Probed once per process; where bwrap or
// user namespaces are missing the fence cannot be had, and the run is refused (run-options), never
// opened unfenced.
import type { WrappedArgv } from '../process/run-in-group.js';
import { firstLine, run } from '../process/run.js';

/**
 * The launcher, run by node inside the namespace: `node -e LAUNCHER -- PORT ARGV...`. The channel is
 * closed before the program starts, so the program never holds it.
 */
const LAUNCHER = `
const net = require('node:net');
const { spawn } = require('node:child_process');
const [port, ...argv] = process.argv.slice(1);
const fail = (why) => { process.stderr.write('svc fence: ' + why + '\\n'); process.exit(127); };
if (!process.send) fail('no channel to svc');
const server = net.createServer();
server.on('error', (e) => fail('cannot listen on 127.0.0.1:' + port + ': ' + e.message));
server.listen(Number(port), '127.0.0.1', () => process.send('listener', server, (e) => {
  if (e) fail('cannot hand the proxy socket to svc: ' + e.message);
  server.close();
  process.disconnect();
  const child = spawn(argv[0], argv.slice(1), { stdio: 'inherit' });
  for (const s of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(s, () => child.kill(s));
  child.on('error', (e) => fail(argv[0] + ': ' + e.message));
  child.on('exit', (code, signal) => {
    if (signal) { process.removeAllListeners(signal); process.kill(process.pid, signal); }
    process.exit(code ?? 1);
  });
}));
`;

/** The loopback port the proxy listens on inside each namespace (the namespace is the leg's alone). */
export const NAMESPACE_PROXY_PORT = 3128;

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

/**
 * `argv` in a namespace of its own; with `accept`, the proxy's listening socket there is handed to
 * `accept` (without: no network at all).
 */
export function inNamespace(argv: readonly string[], accept: ((handle: unknown) => void) | null): WrappedArgv {
  if (!accept) return { argv: ['bwrap', ...NAMESPACE, '--', ...argv] };
  return { argv: ['bwrap', ...NAMESPACE, '--', process.execPath, '-e', LAUNCHER, '--', String(NAMESPACE_PROXY_PORT), ...argv], onHandle: accept };
}
