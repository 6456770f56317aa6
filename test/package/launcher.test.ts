// bin/svc.js run as a program (what npm links `svc` to) where `node` on PATH is the machine's Node
// 20: its shell part execs the package's own Node 22 (CONTRIBUTING.md#toolchain). exec, not a child
// process: the process the shell started is svc on Node 22 itself, so exit codes, pipes and signals
// are svc's own. A single Ctrl-C must reach svc once: a wrapper that relayed it could hand a
// dispatch run a second SIGINT, which exits at once
// (docs/dispatch.md#why-a-run-stops-and-the-status-it-closes-with). Whether it does is a race, so
// the tests also read the signalled process itself: Node 22 on bin/svc.js, no wrapper.
import { spawn } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAdmin } from '../../src/server/admin.js';
import { openDatabase, type Database } from '../../src/server/db.js';
import { MODULES } from '../../src/server/modules.js';
import { BIN, isolatedEnv, makeRepo, type CliEnv, type CliResult } from '../support/cli.js';
import { machineNode20, node20First } from '../support/machine-node.js';
import { startLocalServer, type LocalServer } from '../support/server-process.js';

const ROOT = resolve(import.meta.dirname, '../..');
const PACKAGE_NODE = realpathSync(join(ROOT, 'node_modules', 'node', 'bin', 'node'));

/** `program ARGS` as a shell runs it: stdin fed from `input`, stdout and stderr pipes. */
function start(program: string, args: string[], env: CliEnv, input = '') {
  // detached: svc leads a process group of its own, as a shell's foreground job does.
  const child = spawn(program, args, { env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  child.stdin.end(input);
  const done = new Promise<CliResult>((ok) => child.on('close', (code, signal) => ok({ code, signal, stdout, stderr })));
  return { child, done, out: () => ({ stdout, stderr }) };
}

/** The `svc` a user on Node 20 types: bin/svc.js itself, with that Node first on PATH. */
const asProgram = (args: string[], env: CliEnv, input?: string, bin = BIN) => start(bin, args, { ...env, PATH: node20First() }, input).done;
/** The same command on the test's own Node 22, not through the shell part. */
const onNode22 = (args: string[], env: CliEnv, input?: string) => start(process.execPath, [BIN, ...args], env, input).done;

let server: LocalServer;
let db: Database;

beforeAll(async () => {
  server = await startLocalServer();
  db = openDatabase(server.db, MODULES);
});

afterAll(async () => {
  db?.close();
  expect((await server?.stop()) ?? [], 'responses that break the contract document').toEqual([]);
});

const serviceEnv = (extra: CliEnv = {}) => isolatedEnv({ SVC_BASE_URL: server.url, SVC_PROJECT: 'DEMO', ...extra });

describe('svc run as a program with Node 20 first on PATH', () => {
  test.each([
    ['--version', ['--version'], {}, 0],
    ['an unknown command (usage)', ['nosuch'], {}, 2],
    ['a token that is not one (authentication)', ['items', 'list'], { SVC_TOKEN: 'not-a-token' }, 3],
    ['an item that does not exist (not found)', ['items', 'show', 'DEMO-99999'], {}, 4],
  ] as const)('%s: the exit code, stdout and stderr of svc on Node 22', async (_, args, extra, code) => {
    const env = serviceEnv({ SVC_TOKEN: server.token, ...extra });
    const [program, direct] = await Promise.all([asProgram([...args], env), onNode22([...args], env)]);
    expect(program.code, program.stderr).toBe(code);
    expect(program).toEqual(direct);
  });

  test('a pipe: the token on stdin to auth login, the items as JSON on stdout', async () => {
    const env = serviceEnv();
    const login = await asProgram(['auth', 'login', '--with-token'], env, `${server.token}\n`);
    expect(login.code, login.stderr).toBe(0);
    expect(login.stderr).toContain('Logged in to');
    const list = await asProgram(['items', 'list', '--json'], env);
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.stringify(JSON.parse(list.stdout))).toContain('"DEMO-6"');
  });
});

describe('signals reach svc itself, once', () => {
  let root: string;
  let slowAgent: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'svc-launcher-'));
    slowAgent = join(root, 'slow-agent.sh');
    writeFileSync(slowAgent, '#!/bin/sh\necho $$ >> "$AGENT_PIDS"\necho "started $SVC_CARD_KEY"\nsleep 30\n');
    chmodSync(slowAgent, 0o755);
  });

  test.each([
    ['SIGINT to its process group, as Ctrl-C in a terminal', 130, 'SIGINT', 'group'],
    ["SIGTERM to svc's pid alone, as `kill PID`", 143, 'SIGTERM', 'pid'],
  ] as const)(
    '%s: one process, Node 22; the run winds down once and closes interrupted, exit %i',
    async (_, code, signal, target) => {
      const pids = join(root, `pids-${signal}`);
      const key = createAdmin(db).createWorkItem({ projectKey: 'DEMO', kind: 'task', title: `launcher ${signal}`, type: 'chore' }).key;
      const env: CliEnv = { ...serviceEnv({ SVC_TOKEN: server.token, AGENT_PIDS: pids }), PATH: node20First() };
      const args = [
        'run',
        key,
        '--agent-cmd',
        `sh ${slowAgent}`,
        '--agent-env',
        'AGENT_PIDS',
        '--allow-empty',
        '--kill-grace',
        '1s',
        '--repo',
        await makeRepo(),
      ];
      const run = start(BIN, args, env);
      const pid = run.child.pid!;
      await until('the agent to start', () => existsSync(pids));
      // exec: the pid the shell started is Node 22's, running bin/svc.js; no wrapper is left.
      expect(readlinkSync(`/proc/${pid}/exe`)).toBe(PACKAGE_NODE);
      expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[1]).toBe(BIN);
      process.kill(target === 'group' ? -pid : pid, signal);
      const ended = await run.done;
      expect(ended.code, ended.stderr).toBe(code);
      expect(ended.stderr).toContain(`${signal}: stopping agents, sending pending events and closing the run`);
      expect(ended.stderr).not.toContain('exiting at once');
      const [runId] = readdirSync(join(env.SVC_STATE_DIR!, 'runs'));
      expect(db.prepare('SELECT status, stop_reason FROM dispatch_runs WHERE id = ?').get(runId!)).toEqual({ status: 'cancelled', stop_reason: 'interrupted' });
    },
    60_000,
  );
});

/**
 * A copy of the package laid out as npm lays it out, cheaply: bin/ copied, dist/ linked, the
 * `node` package's binary linked to the clone's. Returns the root of the tree.
 */
function layout(links: Record<string, string>, nodes: Record<string, string>, pkgDir: string): string {
  const root = mkdtempSync(join(tmpdir(), 'svc-layout-'));
  const pkg = join(root, pkgDir);
  mkdirSync(join(pkg, 'bin'), { recursive: true });
  for (const f of ['bin/svc.js', 'bin/package.json', 'package.json']) copyFileSync(join(ROOT, f), join(pkg, f));
  symlinkSync(join(ROOT, 'dist'), join(pkg, 'dist'));
  for (const [at, binary] of Object.entries(nodes)) {
    mkdirSync(join(root, at, 'bin'), { recursive: true });
    symlinkSync(binary, join(root, at, 'bin', 'node'));
  }
  for (const [at, target] of Object.entries(links)) {
    mkdirSync(dirname(join(root, at)), { recursive: true });
    symlinkSync(target, join(root, at));
  }
  return root;
}

const GLOBAL = 'lib/node_modules/svc-cli';
const LOCAL = 'node_modules/svc-cli';

describe('where the package keeps its Node', () => {
  test.each([
    [
      "npm's global link, PREFIX/bin/svc",
      { 'bin/svc': '../lib/node_modules/svc-cli/bin/svc.js' },
      { [`${GLOBAL}/node_modules/node`]: PACKAGE_NODE },
      GLOBAL,
      'bin/svc',
    ],
    [
      'a link of its own elsewhere (readlink finds the package)',
      { 'mine/svc': `../${GLOBAL}/bin/svc.js` },
      { [`${GLOBAL}/node_modules/node`]: PACKAGE_NODE },
      GLOBAL,
      'mine/svc',
    ],
    [
      "npm's link in a project, the `node` package hoisted beside svc-cli",
      { 'node_modules/.bin/svc': '../svc-cli/bin/svc.js' },
      { 'node_modules/node': PACKAGE_NODE },
      LOCAL,
      'node_modules/.bin/svc',
    ],
    [
      "npm's link in a project whose own `node` is another one: svc's, nested, first",
      { 'node_modules/.bin/svc': '../svc-cli/bin/svc.js' },
      { [`${LOCAL}/node_modules/node`]: PACKAGE_NODE, 'node_modules/node': machineNode20() },
      LOCAL,
      'node_modules/.bin/svc',
    ],
    ['the file itself, the `node` package hoisted', {}, { 'node_modules/node': PACKAGE_NODE }, LOCAL, `${LOCAL}/bin/svc.js`],
  ])('%s: svc runs on the package Node 22', async (_, links, nodes, pkgDir, program) => {
    const root = layout(links, nodes, pkgDir);
    const env = isolatedEnv();
    expect(await asProgram(['config', 'set', 'project', 'PROJ'], env, '', join(root, program))).toMatchObject({ code: 0 });
    expect(await asProgram(['config', 'get', 'project'], env, '', join(root, program))).toEqual({ code: 0, signal: null, stdout: 'PROJ\n', stderr: '' });
  });

  test("without it: PATH's node runs it, and Node 20 gets the guard's one line, exit 2", async () => {
    const root = layout({ 'bin/svc': `../${GLOBAL}/bin/svc.js` }, {}, GLOBAL);
    const r = await asProgram(['run', 'PROJ-1'], isolatedEnv(), '', join(root, 'bin/svc'));
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toMatch(/^svc: needs Node\.js 22\.13 or newer; this is Node\.js 20\.\d+\.\d+\n$/);
  });

  test.each([
    ['nested', `${GLOBAL}/node_modules/node`],
    ['hoisted', 'lib/node_modules/node'],
  ])('its `node` package %s without the binary (npm install --ignore-scripts): the line says why', async (_, at) => {
    const root = layout({ 'bin/svc': `../${GLOBAL}/bin/svc.js` }, {}, GLOBAL);
    mkdirSync(join(root, at), { recursive: true });
    copyFileSync(join(ROOT, 'node_modules', 'node', 'package.json'), join(root, at, 'package.json'));
    const r = await asProgram(['--version'], isolatedEnv(), '', join(root, 'bin/svc'));
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toMatch(
      /^svc: needs Node\.js 22\.13 or newer; this is Node\.js 20\.\d+\.\d+ \(svc's own Node 22 is missing: npm skipped the node package's install script; reinstall svc with scripts\)\n$/,
    );
  });
});

async function until(what: string, check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
