// Compiles svc's modules once where svc is installed, into dist/compile-cache (Node's compile cache,
// module.enableCompileCache): npm runs this after installing svc, and the build runs it in a clone.
// bin/svc.js links that folder's files into a user's own cache folder at the user's first start,
// so the first svc on a fresh machine (a CI job, a fleet's worker) starts as a later one does:
// without it, each of 16 workers starting together on 2 cores spent about 25 ms more CPU compiling
// what every start compiles (docs/fleets.md, "A fresh machine's first start").
//
// Node keys each entry by the file's absolute path, its own version and the user's uid, so this
// runs on svc's own Node (the `node` dependency, CONTRIBUTING.md#toolchain) in the folder svc is
// installed in: what it writes serves that installation, on that Node, for that user (root in a
// container or a CI job). Anything else only misses: the cache is then made as it was before.
// Never fails an install: without dist/ (a clone before its build), without svc's Node (npm's
// --ignore-scripts), or on any error, it writes nothing and exits 0.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, realpathSync, renameSync, rmSync } from 'node:fs';
import module from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// (npm may run this on a Node 20 older than import.meta.dirname.)
const self = fileURLToPath(import.meta.url);
const root = join(dirname(self), '..');
const dist = join(root, 'dist');
const CACHE = join(dist, 'compile-cache');

/** svc's own Node, where bin/svc.js finds it: in the package, or beside it in node_modules. */
function svcNode() {
  return [join(root, 'node_modules', 'node', 'bin', 'node'), join(root, '..', 'node', 'bin', 'node')].find((n) => existsSync(n)) ?? null;
}

/**
 * On svc's Node: loads every module a command may load (not the local service, nor the two large
 * bundles only `--jq` and the Kubernetes executor load) with the cache on, into a fresh folder that
 * replaces the old one at once. cli.js runs as it loads: given --version, it prints the version.
 */
async function seed(tmp) {
  module.enableCompileCache(tmp);
  process.argv = [process.argv[0], join(root, 'bin', 'svc.js'), '--version'];
  for (const file of readdirSync(dist).sort()) {
    if (file.endsWith('.js') && file !== 'server.js' && !file.startsWith('dist-')) await import(pathToFileURL(join(dist, file)).href);
  }
  module.flushCompileCache();
  rmSync(CACHE, { recursive: true, force: true });
  renameSync(tmp, CACHE);
}

if (process.argv[2] === '--seed') {
  const tmp = `${CACHE}.tmp-${process.pid}`;
  await seed(tmp).catch(() => rmSync(tmp, { recursive: true, force: true }));
  process.exit(0);
} else {
  const node = svcNode();
  if (node && existsSync(join(dist, 'cli.js'))) {
    // The real path: Node keys the cache by the modules' real paths, as it loads them.
    spawnSync(node, [realpathSync(self), '--seed'], { cwd: dirname(dist), stdio: 'ignore', timeout: 60_000 });
  }
}
