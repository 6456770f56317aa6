// The entry point: the only module that touches `process`. It builds the context, runs the
// commander tree, turns every error into one line on stderr and the documented exit code, and
// turns SIGINT/SIGTERM into an abort signal the dispatch engine honours.
import type { Command } from 'commander';
import type { ConfigStore } from './commands/config/store.js';
import type { Context, GlobalOptions } from './commands/context.js';
import { EXIT } from './commands/exit-codes.js';
import { buildProgram } from './commands/program.js';
import { runProgram } from './commands/run-program.js';
import { Interrupted, trapSignals } from './dispatch/signals.js';
import type { OutputOptions } from './ui/output.js';
import { directStdio } from './ui/stdio.js';
import type { Style } from './ui/style.js';

declare const __SVC_VERSION__: string | undefined;
const version = typeof __SVC_VERSION__ === 'string' ? __SVC_VERSION__ : '0.0.0-dev';

// stdout and stderr are written straight to their descriptors until a command needs Node's streams
// (ui/stdio.ts): making them loads Node's net and stream modules. A reader that goes away
// (`svc help exit-codes | head -1`) is no error of ours: without a listener the EPIPE killed svc
// with a stack trace. The command runs on to its own end and exit code (a dispatch run still
// closes), its further output going nowhere.
const ignoringEpipe = (stream: NodeJS.WriteStream) =>
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
  });
const isatty = (fd: number) => process.getBuiltinModule('node:tty').isatty(fd);
const stdio = {
  stdout: directStdio(1, { make: () => ignoringEpipe(process.stdout), isatty }),
  stderr: directStdio(2, { make: () => ignoringEpipe(process.stderr), isatty }),
};
const stdout = stdio.stdout.stream;
const stderr = stdio.stderr.stream;

// A command that holds nothing open exits at once on SIGINT/SIGTERM (130/143). A dispatch run says
// so first: then the first signal aborts (no new leg, agents signalled, the run closed) and a
// second one exits at once, agents killed, the run left to `svc runs recover` or the reaper.
const trap = trapSignals(
  process,
  (code) => process.exit(code),
  (message) => stderr.write(`svc: ${message}\n`),
);
const SIGNALS = ['SIGINT', 'SIGTERM'] as const;
const ownHandlers = new Map(SIGNALS.map((sig) => [sig, new Set(process.listeners(sig))]));

/**
 * A library that hooks SIGINT/SIGTERM and re-raises the signal (conf's atomic writer did, through
 * when-exit) would make the trap read the first Ctrl-C as the second and exit before the run is
 * closed. Called once the lazy modules have loaded; their 'exit' clean-ups stay.
 */
function dropForeignSignalHandlers(): void {
  for (const sig of SIGNALS) {
    for (const listener of process.listeners(sig)) if (!ownHandlers.get(sig)!.has(listener)) process.off(sig, listener);
  }
}
const received = () => {
  const reason: unknown = trap.signal.reason;
  return reason instanceof Interrupted ? reason.signal : null;
};

// The config store and the output are loaded just before a command runs, so `svc --help` loads
// neither; chalk only when the command's output is coloured (ui/style.ts).
let lazy: typeof import('./commands/lazy-core.js') | undefined;
let style: Style | undefined;
async function loadLazy(_hooked: Command, action: Command): Promise<void> {
  if (lazy) return;
  lazy = await import('./commands/lazy-core.js');
  style = await lazy.loadStyle(lazy.colorLevel(outputOptions(action.optsWithGlobals() as GlobalOptions), stderr));
  dropForeignSignalHandlers();
}

/** What the output is made from: the same in loadLazy, which picks its styles, and in context. */
function outputOptions(globals: GlobalOptions): OutputOptions {
  return {
    stdout,
    stderr,
    env: process.env,
    json: globals.json,
    jq: globals.jq,
    color: globals.color,
    verbose: globals.verbose,
  };
}

let built: Context | undefined;
function context(cmd: Command): Context {
  if (built) return built;
  if (!lazy) throw new Error('internal: a command ran before its modules were loaded');
  const { openConfig, createOutput } = lazy;
  const globals = cmd.optsWithGlobals() as GlobalOptions;
  const env = process.env;
  let config: ConfigStore | undefined;
  built = {
    // Read when a command reads it: making process.stdin loads Node's file or socket streams.
    get stdin() {
      return process.stdin;
    },
    stdout,
    stderr,
    env,
    cwd: process.cwd(),
    globals,
    out: createOutput({ ...outputOptions(globals), style }),
    config: () => (config ??= openConfig(env)),
    interrupts: {
      signal: trap.signal,
      reason: received,
      // A command that winds down on a signal runs long (a dispatch run, the server): a reader
      // that stops reading must not stall its heartbeats or its requests in a blocking write.
      handle: (mode) => {
        stdio.stdout.useNodeStream();
        stdio.stderr.useNodeStream();
        trap.handle(mode);
      },
    },
    exitCode: EXIT.ok,
    self: { execPath: process.execPath, script: process.argv[1] ?? 'svc' },
    version,
  };
  return built;
}

// Only the invoked command's group is built (program.ts); help and anything unknown build all.
const program = buildProgram(version, context, { stdout, stderr }, process.argv.slice(2)).hook('preAction', loadLazy);

// No top-level await: the build merges the start-up modules every command shares into this one
// (scripts/merge-startup.mjs), so the lazy chunks import it; a chunk imported while this module
// still awaited would wait for it to finish, and it for the chunk.
void runProgram(program, process.argv, { stderr, context: () => built }, 'node').then((code) => {
  process.exitCode = code;
});
