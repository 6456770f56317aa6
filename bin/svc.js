#!/bin/sh
':' /*
# Run as a program (npm links `svc` here), this file is a shell script first: it execs the Node 22
# that comes with the package (the `node` dependency, CONTRIBUTING.md#toolchain) on this same file,
# so svc runs on Node 22 whatever `node` is on PATH (Debian's is 20). exec, not a child: signals,
# the exit code, stdin/stdout/stderr and the terminal are the program's own, and it costs a shell
# (1–2 ms of CPU), not a second Node start. Node skips this part (to Node it is a string and a
# comment), so `node bin/svc.js` starts at the guard below, as the exec does. Biome leaves this
# file unformatted (biome.json): its semicolon after ':' would have the shell run /*.
# Where npm puts that Node, from the folder of the path the shell was given (Node resolves the
# link to this file itself): npm's link in a project's node_modules/.bin, its global link in
# PREFIX/bin, or this file in the package's own bin/. Anywhere else readlink finds the package.
found() { for n; do [ -x "$n" ] && node=$n && return 0; done; return 1; }
dir=${0%/*}
case $dir in
  *node_modules/.bin) found "$dir/../svc-cli/node_modules/node/bin/node" "$dir/../node/bin/node" ;;
  *) found "$dir/../node_modules/node/bin/node" "$dir/../lib/node_modules/svc-cli/node_modules/node/bin/node" ;;
esac || { pkg=$(readlink -f -- "$0" 2>/dev/null) && pkg=${pkg%/bin/*} && found "$pkg/node_modules/node/bin/node" "$pkg/../node/bin/node"; } || node=node
# Installed with --ignore-scripts, the package's Node binary is missing: the PATH's node runs the
# rest, and on a Node too old for svc the guard below says which one svc needs.
exec "$node" "$0" "$@"
*/
// Node older than svc needs: one line and exit 2 before the program loads (it would fail in odd
// ways: no node:sqlite, no process.getBuiltinModule). Old syntax on purpose, so any Node parses it.
var v = process.versions.node.split('.').map(Number);
// The `node` package beside svc without its binary: npm skipped its install script (--ignore-scripts).
function nodeNotFetched() {
  var fs = require('node:fs');
  return [__dirname + '/../node_modules/node', __dirname + '/../../node'].some(function (p) {
    return fs.existsSync(p + '/package.json') && !fs.existsSync(p + '/bin/node');
  });
}
if (v[0] < 22 || (v[0] === 22 && v[1] < 13)) {
  const why = nodeNotFetched() ? " (svc's own Node 22 is missing: npm skipped the node package's install script; reinstall svc with scripts)" : '';
  process.stderr.write('svc: needs Node.js 22.13 or newer; this is Node.js ' + process.versions.node + why + '\n');
  process.exit(2);
}
// Kept tiny on purpose: turn on Node's compile cache before anything else loads, then hand over.
// The cache lives in the user's cache folder (XDG_CACHE_HOME, else ~/.cache): each user has their
// own and it outlives a cleaned /tmp. A folder that cannot be made (a read-only home) leaves the
// cache off and nothing else; NODE_COMPILE_CACHE and NODE_DISABLE_COMPILE_CACHE still decide first.
// A cache folder not made yet (a fresh machine's first start) begins as the one made where svc is
// installed (bin/compile-cache.mjs), by hard links: a copy cost more CPU than the cache saves
// (25-45 ms), a link costs about 2 ms, and Node replaces an entry it rewrites (a new file renamed
// over it), so the installed one never changes. Made aside and renamed into place: a second svc
// beside the first sees the whole folder or none. Where links cannot be made (another filesystem,
// another user's files) the folder starts empty, as it did before.
const nodeModule = process.getBuiltinModule('node:module');
const cacheHome = process.env.XDG_CACHE_HOME || (process.env.HOME ? process.env.HOME + '/.cache' : '');
const cacheDir = process.env.NODE_COMPILE_CACHE || (cacheHome ? cacheHome + '/svc/compile-cache' : undefined);
if (cacheDir && !process.env.NODE_DISABLE_COMPILE_CACHE) {
  const fs = process.getBuiltinModule('node:fs');
  const seed = __dirname + '/../dist/compile-cache';
  const aside = cacheDir + '.seed-' + process.pid;
  const link = (from, to) => {
    fs.mkdirSync(to, { recursive: true });
    for (const e of fs.readdirSync(from, { withFileTypes: true }))
      e.isDirectory() ? link(from + '/' + e.name, to + '/' + e.name) : fs.linkSync(from + '/' + e.name, to + '/' + e.name);
  };
  try {
    if (!fs.existsSync(cacheDir) && fs.existsSync(seed)) {
      link(seed, aside);
      fs.renameSync(aside, cacheDir);
    }
  } catch {
    try {
      fs.rmSync(aside, { recursive: true, force: true });
    } catch {}
  }
}
nodeModule.enableCompileCache?.(cacheDir);
const args = process.argv.slice(2);
// `--version`, with `--json` or not: the one answer that needs none of the program.
const version = args.some((a) => a === '--version' || a === '-V') && args.every((a) => a === '--version' || a === '-V' || a === '--json');
if (version) {
  const declared = JSON.parse(require('node:fs').readFileSync(`${__dirname}/../package.json`, 'utf8')).version;
  process.stdout.write(args.includes('--json') ? `${JSON.stringify({ version: declared })}\n` : `${declared}\n`);
} else if (v[0] === 22 ? v[1] >= 14 : v[0] > 23 || v[1] >= 5) {
  // This file is CommonJS (bin/package.json) and require()s the program, an ES module with no
  // top-level await: Node then loads it without its asynchronous module jobs, and `svc --help`,
  // which imports nothing else, never starts them (1–3 ms of its start-up).
  require('../dist/cli.js');
} else {
  // Node 22.13 and 23.0–23.4 warn that require() of an ES module is experimental: import it.
  import('../dist/cli.js');
}
