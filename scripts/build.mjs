// Bundles the CLI into dist/ for a fast start-up:
// - dist/main.js is src/cli.ts with commander inlined; everything a command handler imports sits in
//   lazy chunks (code splitting), so `svc --help` loads one file and no handler.
// - Dependencies are bundled too: a command loads a few chunks instead of hundreds of files from
//   node_modules (conf alone pulled in ajv and semver, ~1,000 module loads).
// - dist/cli.js, the entry bin/svc.js imports, answers `svc --version` and `svc --help` (stdout not
//   a terminal) from text the real program printed at build time, without loading it; anything
//   else imports dist/main.js. The text is the program's own output, so it cannot drift.
// - Before the program loads, dist/cli.js tells V8 to keep the heap small (see below).
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { build } from 'esbuild';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const dist = new URL('../dist/', import.meta.url);

// commander is the one dependency on the start-up path. Its `import x from 'node:child_process'`
// (and fs, path, util) makes Node build ESM facades of those modules, which read every export and
// so load child_process, net, streams and fs/promises: ~10 ms before anything prints. Here they
// become process.getBuiltinModule lookups, and child_process is looked up only when it spawns.
const lazyBuiltinsForCommander = {
  name: 'lazy-builtins-for-commander',
  setup(b) {
    b.onResolve({ filter: /^node:/ }, (args) =>
      /[/\\]node_modules[/\\]commander[/\\]/.test(args.importer) ? { path: args.path, namespace: 'lazy-builtin' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'lazy-builtin' }, ({ path }) => {
      const get = `process.getBuiltinModule(${JSON.stringify(path)})`;
      const contents = path === 'node:child_process'
        ? `export default new Proxy({}, { get: (_, key) => ${get}[key] });`
        : `const m = ${get};\nexport default m;\nexport const { EventEmitter, stripVTControlCharacters } = m;`;
      return { loader: 'js', contents };
    });
  },
};

// The API client (src/api/request.ts) uses two things of undici: `Agent` and `request`. undici's
// index loads all of it (fetch, WebSocket, EventSource, caches, mocks: 1.4 MB of source), and a
// `svc run` keeps every loaded source in its heap. Here `undici`, imported from our own code,
// is a module of just those two, made of undici's own files exactly as its index makes them:
// `request` is index.js's makeDispatcher(api.request), its text taken from the installed
// undici at build time (the build fails if undici changes shape), and the index's two side
// effects stay (the dispatcher API on Dispatcher.prototype; the global dispatcher). Importing
// any other name of undici fails the build ("No matching export").
const UNDICI = new URL('../node_modules/undici/', import.meta.url);
function undiciClientModule() {
  const index = readFileSync(new URL('index.js', UNDICI), 'utf8');
  const makeDispatcher = /^function makeDispatcher \(fn\) \{\n[\s\S]*?\n\}\n/m.exec(index)?.[0];
  for (const needed of ['Object.assign(Dispatcher.prototype, api)', 'module.exports.request = makeDispatcher(api.request)', "require('./lib/global')"]) {
    if (!makeDispatcher || !index.includes(needed)) throw new Error(`build: undici/index.js changed shape (${needed}); revisit undiciForTheClient in scripts/build.mjs`);
  }
  return `import Agent from 'undici/lib/dispatcher/agent.js';
import Dispatcher from 'undici/lib/dispatcher/dispatcher.js';
import api from 'undici/lib/api/index.js';
import util from 'undici/lib/core/util.js';
import errors from 'undici/lib/core/errors.js';
import globals from 'undici/lib/global.js';
const { InvalidArgumentError } = errors;
const { getGlobalDispatcher } = globals;
Object.assign(Dispatcher.prototype, api);
${makeDispatcher}
export const request = makeDispatcher(api.request);
export { Agent };
`;
}
const undiciForTheClient = {
  name: 'undici-for-the-client',
  setup(b) {
    b.onResolve({ filter: /^undici$/ }, (args) =>
      /[/\\]node_modules[/\\]/.test(args.importer) ? undefined : { path: 'undici', namespace: 'undici-client' },
    );
    b.onLoad({ filter: /.*/, namespace: 'undici-client' }, () => ({
      loader: 'js',
      resolveDir: new URL('..', UNDICI).pathname,
      contents: undiciClientModule(),
    }));
  },
};

// conf imports ajv (with ajv-formats) for its `schema` option and semver for its `migrations`;
// svc's store (src/commands/config/store.ts) passes neither, yet every command loaded them
// (~0.5 MB of source kept in the heap). Inside conf they are stand-ins that fail loudly if a
// store ever asks for a schema or a migration: then this plugin must go.
const confWithoutSchemas = {
  name: 'conf-without-schemas',
  setup(b) {
    b.onResolve({ filter: /^(ajv\/dist\/2020\.js|ajv-formats|semver)$/ }, (args) =>
      /[/\\]node_modules[/\\]conf[/\\]/.test(args.importer) ? { path: args.path, namespace: 'conf-unused' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'conf-unused' }, ({ path }) => {
      const fail = `() => { throw new Error(${JSON.stringify(`svc: conf needs ${path}, which scripts/build.mjs leaves out (a config schema or migrations): drop its conf-without-schemas plugin`)}); }`;
      const contents = path === 'ajv/dist/2020.js'
        ? `const fail = ${fail};\nexport class Ajv2020 { constructor() { fail(); } }`
        : `const fail = ${fail};\nexport default new Proxy({}, { get: fail });`;
      return { loader: 'js', contents };
    });
  },
};

const { metafile } = await build({
  entryPoints: { main: 'src/cli.ts', server: 'src/server/index.ts' },
  outdir: 'dist',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node22',
  packages: 'bundle',
  // Bundled CommonJS dependencies (ajv, semver, …) call require() for Node's own modules.
  banner: { js: "const require = process.getBuiltinModule('node:module').createRequire(import.meta.url);" },
  plugins: [lazyBuiltinsForCommander, undiciForTheClient, confWithoutSchemas],
  // Whitespace and comments out: a run keeps the source of every chunk it loads in its heap, and
  // one non-ASCII character in a comment (undici has a few) stores a whole chunk as two-byte text.
  // Names stay (no identifier minifying); dist/*.js.map maps stack positions back to src/.
  minifyWhitespace: true,
  minifySyntax: true,
  sourcemap: 'linked',
  logLevel: 'warning',
  metafile: true,
  define: { __SVC_VERSION__: JSON.stringify(pkg.version) },
});

// The root help exactly as the program prints it into a pipe (no terminal: width 80, no colour).
const help = spawnSync(process.execPath, [new URL('main.js', dist).pathname, '--help'], { encoding: 'utf8' });
if (help.status !== 0 || !help.stdout) throw new Error(`build: dist/main.js --help failed: ${help.stderr}`);

const entry = `// Generated by scripts/build.mjs: the two answers that need none of the program, else the program.
const fs = process.getBuiltinModule('node:fs');
const args = process.argv.slice(2);
const only = (...flags) => args.length === 1 && flags.includes(args[0]);

// Setting up process.stdout costs ~3 ms (net, streams); a blocking write to fd 1 costs nothing.
function print(text) {
  const buf = Buffer.from(text);
  let done = 0;
  try {
    while (done < buf.length) done += fs.writeSync(1, buf, done);
  } catch (error) {
    if (error.code === 'EAGAIN') process.stdout.write(buf.subarray(done)); // a non-blocking pipe
    else if (error.code !== 'EPIPE') throw error; // EPIPE: the reader is gone, nothing to tell it
  }
}

// Into a pipe, a file or a socket the help is exactly the text below; a terminal (or /dev/null, a
// character device too) gets the program, which wraps the help to the terminal's width.
function piped() {
  try {
    const st = fs.fstatSync(1);
    return st.isFIFO() || st.isFile() || st.isSocket();
  } catch {
    return false;
  }
}

if (only('--version', '-V')) {
  print(${JSON.stringify(`${pkg.version}\n`)});
} else if (only('--help', '-h') && piped()) {
  print(${JSON.stringify(help.stdout)});
} else {
  // A run streams agent output for as long as the agent talks: keep the heap near what is live
  // instead of letting V8 grow it with the traffic (peak RSS stays flat when output grows
  // tenfold). --optimize-for-size would take ~3 MB more off the peak, but V8 does not promise it
  // is safe to set once running, and a run must never crash for a benchmark. Compile for footprint: the client is I/O-bound (its heavy lifting, JSON, buffers and
  // regexes, is native), so JavaScript stays in the interpreter (no Sparkplug, no TurboFan, whose
  // code and compile zones cost ~8 MB of a run), and undici's HTTP parser (WebAssembly) stays in
  // Liftoff (TurboFan compiling it costs ~16 MB at the first request). Only flags V8 reads as it
  // compiles or sizes a collection belong here: GC threading flags are fixed once V8 runs
  // (--single-threaded-gc set now crashes it at its next full collection). Not for \`svc server\`,
  // whose throughput matters more than its footprint.
  if (args[0] !== 'server') {
    process.getBuiltinModule('node:v8').setFlagsFromString('--semi-space-growth-factor=1 --heap-growing-percent=50 --liftoff-only --no-opt --no-sparkplug');
  }
  await import('./main.js');
}
`;

// Replaced in one rename: a test spawning bin/svc.js meanwhile sees the old entry or the new one.
writeFileSync(new URL('cli.js.tmp', dist), entry);
renameSync(new URL('cli.js.tmp', dist), new URL('cli.js', dist));

// Chunk names carry content hashes, so every build leaves the previous chunks behind (and `npm
// pack` would ship them). Remove outputs of earlier builds once they are an hour old: a command
// started before a rebuild may still import its own chunks for a while. `--clean` (npm's prepack)
// removes them all, so a tarball holds exactly one build.
const current = new Set([...Object.keys(metafile.outputs).map((f) => basename(f)), 'cli.js']);
for (const name of readdirSync(dist)) {
  if (current.has(name)) continue;
  const file = new URL(name, dist);
  // Another build may be pruning the same folder: a file gone meanwhile is fine.
  const age = Date.now() - (statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
  if (process.argv.includes('--clean') || age > 60 * 60_000) rmSync(file, { force: true });
}
