// What svc loads as it starts: a command that reads a setting spawns nothing, so Node's
// child_process (and the net and dgram internals it pulls in) stays unloaded. Held here because the
// config store reads its user syntax from dispatch/boundary/user.ts, which does spawn (`id`), later.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect, test } from 'vitest';
import { BIN, isolatedEnv } from '../support/cli.js';

test('svc config get and svc items list --help load no node:child_process; config get and --help into pipes no net or stream', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-builtins-'));
  const probe = join(dir, 'probe.cjs');
  // Preloaded: at exit, the builtins this process loaded, one line on stderr.
  writeFileSync(
    probe,
    // Written with fs: process.stderr would load the very stream modules under test.
    "process.on('exit', () => require('fs').writeSync(2, 'LOADED ' + process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice(13)).join(',') + '\\n'));\n",
  );
  const loaded = async (args: string[]) => {
    const env = { ...process.env, ...isolatedEnv({ HOME: dir, SVC_CONFIG_DIR: join(dir, 'config') }) };
    const out = await new Promise<string>((done, fail) =>
      execFile(process.execPath, ['-r', probe, BIN, ...args], { env }, (error, _stdout, stderr) =>
        error && !/LOADED/.test(stderr) ? fail(error) : done(stderr),
      ),
    );
    return (/LOADED (.*)/.exec(out)?.[1] ?? '').split(',');
  };
  const configGet = await loaded(['config', 'get', 'project']);
  // The probe itself works: the store's own modules are there.
  expect(configGet).toContain('fs');
  expect(configGet).not.toContain('child_process');
  expect(await loaded(['items', 'list', '--help'])).not.toContain('child_process');
  // Its line goes straight to the pipe (ui/stdio.ts): no socket around stdout or stderr, no streams.
  expect(configGet).not.toContain('net');
  expect(configGet).not.toContain('stream');
  const help = await loaded(['--help']);
  expect(help).not.toContain('net');
  expect(help).not.toContain('stream');
});

test('what every start loads is one module, cli.js, and what every command loads another, command.js', () => {
  const dist = join(import.meta.dirname, '../../dist');
  const imports = (file: string) => [...readFileSync(join(dist, file), 'utf8').matchAll(/(?:\bfrom|\bimport)\s*"\.\/([\w.-]+\.js)"/g)].map((m) => m[1]!);
  const reach = (file: string, seen = new Set<string>()): Set<string> => {
    if (!seen.has(file)) {
      seen.add(file);
      for (const dep of imports(file)) reach(dep, seen);
    }
    return seen;
  };
  const server = reach('server.js');
  // cli.js imports no chunk of the CLI's own: only ones the service shares, which stay apart.
  expect([...reach('cli.js')].filter((f) => f !== 'cli.js' && !server.has(f))).toEqual([]);
  expect(server.has('cli.js')).toBe(false);
  // What every command loads before it runs (the config store, the output) is command.js, which brings nothing more of its own.
  const lazy = [...readFileSync(join(dist, 'cli.js'), 'utf8').matchAll(/\bimport\("\.\/([\w.-]+\.js)"\s*\)/g)].map((m) => m[1]!);
  expect(lazy).toContain('command.js');
  expect(lazy.filter((f) => f.startsWith('lazy-core'))).toEqual([]);
  expect(imports('command.js')).toContain('cli.js');
  expect([...reach('command.js')].filter((f) => f !== 'command.js' && f !== 'cli.js' && !server.has(f))).toEqual([]);
  // Its map reaches the sources (stack positions still map to src/).
  expect(JSON.parse(readFileSync(join(dist, 'cli.js.map'), 'utf8')).sources).toEqual(expect.arrayContaining(['../src/cli.ts', '../src/dispatch/signals.ts']));
});

test('chalk is loaded only when the output is coloured: not for a piped svc config get, but with FORCE_COLOR=1', async () => {
  const dist = join(import.meta.dirname, '../../dist');
  // The chunk that holds svc's chalk, found by its source map (ora bundles a chalk of its own).
  const chunk = readdirSync(dist).find(
    (f) => f.endsWith('.js.map') && (JSON.parse(readFileSync(join(dist, f), 'utf8')).sources as string[]).includes('../node_modules/chalk/source/index.js'),
  );
  expect(chunk).toBeDefined();
  const chalkUrl = `${pathToFileURL(join(dist, chunk!.slice(0, -'.map'.length)))}`;
  const dir = mkdtempSync(join(tmpdir(), 'svc-chalk-'));
  // NODE_DEBUG=esm: Node's ES module loader names each module it loads on stderr.
  const modules = (extra: Record<string, string | undefined>) => {
    const env = { ...process.env, ...isolatedEnv({ HOME: dir, SVC_CONFIG_DIR: join(dir, 'config'), NODE_DEBUG: 'esm', ...extra }) };
    return new Promise<string>((done, fail) =>
      execFile(process.execPath, [BIN, 'config', 'get', 'project'], { env }, (error, _o, stderr) => (error ? fail(error) : done(stderr))),
    );
  };
  const plain = await modules({ NO_COLOR: '1' });
  // The probe sees modules at all: command.js, which every command loads, is named.
  expect(plain).toContain(`${pathToFileURL(join(dist, 'command.js'))}`);
  expect(plain).not.toContain(chalkUrl);
  expect(await modules({ NO_COLOR: undefined, FORCE_COLOR: '1' })).toContain(chalkUrl);
});
