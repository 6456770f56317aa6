// The ready-made fleets run as written (DISPATCH §8, issue 39): each template's own commands,
// taken from the file (test/examples/engines.ts), as four workers at once, one per template, over
// one local service and one bare `origin`, as root through the default agent pool. Stand-ins for
// what this machine cannot have: a `claude` first on PATH that commits (and records its uid and
// environment), an `npm` that installs svc only from the tarball name `npm pack` makes, a
// `buildkite-agent` that hands out the step's secrets, and the image's svc for Kubernetes. Every
// card's work must end on origin, every card be implemented once, and no secret but the agent's
// own key reach an agent or the install.
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, makeRepo, run } from '../support/cli.js';
import { startTestService, type TestService } from '../support/service.js';
import { buildkite, buildkiteCloneUrl, github, gitlab, gitlabCloneUrl, kubernetes, type Plan, type Site } from './engines.js';

const ROOT = join(import.meta.dirname, '..', '..');
const CARDS = 8;
const isRoot = process.getuid?.() === 0;
const SECRETS = {
  SVC_TOKEN: '',
  ANTHROPIC_API_KEY: 'anthropic-key-the-agent-may-have',
  GITHUB_TOKEN: 'ghs_jobtoken0000000000000000000000000',
  SVC_GIT_TOKEN: 'glpat-pushtoken000000000',
  GIT_TOKEN: 'github_pat_pushtoken0000000000',
  CI_JOB_TOKEN: 'glcbt-jobtoken00000000',
  BUILDKITE_AGENT_ACCESS_TOKEN: 'bkaat_agenttoken000000',
};
const NOT_FOR_AGENTS = ['SVC_TOKEN', 'GITHUB_TOKEN', 'SVC_GIT_TOKEN', 'GIT_TOKEN', 'CI_JOB_TOKEN', 'BUILDKITE_AGENT_ACCESS_TOKEN'] as const;

let s: TestService;
let top: string;
let marks: string;
let pack: string;
const secrets = { ...SECRETS };

/** A folder everyone may traverse (the pool users exec the stand-ins and write their marks). */
function openDir(path: string, mode = 0o755): string {
  mkdirSync(path, { recursive: true });
  chmodSync(path, mode);
  return path;
}

beforeAll(async () => {
  s = await startTestService();
  secrets.SVC_TOKEN = s.token;
  top = openDir(mkdtempSync(join(tmpdir(), 'svc-fleet-run-')));
  marks = openDir(join(top, 'marks'), 0o1777);
  openDir(join(top, 'installs'), 0o1777);
  pack = JSON.parse(await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], ROOT))[0].filename;
  // origin: the user's repository, holding the tarball the templates install from (vendor/).
  const base = await makeRepo();
  mkdirSync(join(base, 'vendor'));
  writeFileSync(join(base, 'vendor', pack), 'the tarball npm pack makes\n');
  await run('git', ['-C', base, 'add', 'vendor']);
  await run('git', ['-C', base, '-c', 'user.name=u', '-c', 'user.email=u@example.invalid', 'commit', '-qm', 'vendor svc']);
  await run('git', ['clone', '-q', '--bare', base, join(top, 'srv', 'acme', 'shop.git')]);
}, 60_000);
afterAll(async () => {
  await s?.close();
});

/** The stand-ins of one worker, first on its PATH; `image`: svc is already installed (Kubernetes). */
function tools(dir: string, image: boolean): string {
  const bin = openDir(join(dir, 'bin'));
  const svc = `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} "$@"\n`;
  const write = (name: string, text: string) => writeFileSync(join(bin, name), text, { mode: 0o755 });
  write(
    'claude',
    // It also tries the Kubernetes worker's push token, a file of root's.
    `#!/bin/sh\ncat > /dev/null\nm="${marks}/$SVC_CARD_KEY.$(id -u).$$"\nenv > "$m"\n` +
      `cat "${join(top, 'kubernetes', 'mounts', 'git-token', 'GIT_TOKEN')}" >> "$m" 2>&1\nsleep 1\n` +
      `git commit -q --allow-empty -m "$SVC_CARD_KEY: done" || exit 1\n` +
      `echo '{"type":"result","subtype":"success","is_error":false,"result":"done","total_cost_usd":0}'\n`,
  );
  write(
    'npm',
    `#!/bin/sh\nenv > "${join(top, 'installs')}/$$"\n[ "$1 $2" = "install -g" ] || { echo "npm stand-in: not an install -g: $*" >&2; exit 1; }\nshift 2\n` +
      `for a; do case "$a" in\n  ./vendor/${pack}) [ -f "$a" ] || { echo "npm ERR! ENOENT $a" >&2; exit 1; } ;;\n` +
      `  @anthropic-ai/claude-code) ;;\n  *) echo "npm stand-in: not what npm pack makes: $a" >&2; exit 1 ;;\nesac; done\n` +
      `printf '%s' '${svc.replace(/'/g, `'\\''`)}' > "${bin}/svc" && chmod 755 "${bin}/svc"\n`,
  );
  write(
    'buildkite-agent',
    `#!/bin/sh\ncase "$1 $2" in\n  "secret get") exec cat "${join(dir, 'bk-secrets')}/$3" ;;\n  annotate*) cat > /dev/null ;;\n  *) exit 1 ;;\nesac\n`,
  );
  mkdirSync(join(dir, 'bk-secrets'));
  for (const [k, v] of Object.entries(secrets)) writeFileSync(join(dir, 'bk-secrets', k), v, { mode: 0o600 });
  if (image) write('svc', svc);
  return bin;
}

function site(index: number, name: string): Site & { bin: string } {
  const dir = openDir(join(top, name));
  const bin = tools(dir, name === 'kubernetes');
  const home = join(dir, 'home');
  mkdirSync(home);
  return {
    index,
    total: 4,
    serviceUrl: s.url,
    project: s.projectKey,
    serverUrl: `file://${join(top, 'srv')}`,
    projectPath: 'acme/shop',
    secrets,
    dir,
    bin,
    basics: { PATH: `${bin}:${process.env.PATH}`, HOME: home, LANG: 'C.UTF-8', USER: 'root', NODE_COMPILE_CACHE: join(tmpdir(), 'svc-node-cache') },
  };
}

function shell(argv: string[], script: string, cwd: string, env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((done) => {
    const child = spawn(argv[0]!, [...argv.slice(1), script], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('close', (code) => done({ code, out }));
  });
}

/** A worker from its plan: the engine's checkout and mounts, then its shells in order. */
async function start(name: string, plan: Plan, cloneUrl?: string): Promise<{ name: string; code: number | null; out: string }> {
  if (plan.checkout) {
    await run('git', ['clone', '-q', plan.checkout.remote, plan.workspace]);
    if (cloneUrl) await run('git', ['-C', plan.workspace, 'remote', 'set-url', 'origin', cloneUrl]);
  } else mkdirSync(plan.workspace, { recursive: true });
  for (const [path, [content, mode]] of Object.entries(plan.mounts)) {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content, { mode });
  }
  let out = '';
  for (const sh of plan.shells) {
    const r = await shell(sh.argv, sh.script, plan.workspace, sh.env);
    out += r.out;
    if (r.code !== 0) return { name, code: r.code, out };
  }
  return { name, code: 0, out };
}

const branches = async () =>
  (await run('git', ['for-each-ref', '--format=%(refname:lstrip=2) %(subject)', 'refs/heads/svc/'], join(top, 'srv', 'acme', 'shop.git')))
    .trim()
    .split('\n')
    .filter(Boolean)
    .sort();

describe.skipIf(!isRoot)('the ready-made fleets, run as written', () => {
  it('four workers, one per template, lose no card’s work and run none twice; no push credential reaches an agent', { timeout: 90_000 }, async () => {
    const keys = Array.from(
      { length: CARDS },
      (_, i) => s.admin.createWorkItem({ projectKey: s.projectKey, kind: 'task', type: 'code', title: `card ${i + 1}` }).key,
    );
    const gh = site(0, 'github');
    const gl = site(1, 'gitlab');
    const bk = site(2, 'buildkite');
    const k8s = site(3, 'kubernetes');
    const workers = await Promise.all([
      start('github', github(gh)),
      start('gitlab', gitlab(gl), gitlabCloneUrl(gl)),
      start('buildkite', buildkite(bk), buildkiteCloneUrl(bk)),
      start('kubernetes', kubernetes(k8s)),
    ]);
    const outs = workers.map((w) => `--- ${w.name} (exit ${w.code})\n${w.out}`).join('\n');
    expect(
      workers.map((w) => [w.name, w.code]),
      outs,
    ).toEqual(workers.map((w) => [w.name, 0]));

    // Each template's worker did work of its own, so each one's push is what put it on origin.
    for (const w of workers) expect(w.out, outs).toMatch(/ implemented in /);
    // Every card's work is on origin, as the agent committed it.
    expect(await branches(), outs).toEqual(keys.map((k) => `svc/${k} ${k}: done`).sort());
    // Every card implemented once across all runs, and its agent started once, as a pool user.
    const implemented = s.db
      .prepare(`SELECT work_item_key AS k, COUNT(*) AS n FROM dispatch_cards WHERE disposition = 'implemented' GROUP BY work_item_key`)
      .all() as { k: string; n: number }[];
    expect(Object.fromEntries(implemented.map((r) => [r.k, r.n])), outs).toEqual(Object.fromEntries(keys.map((k) => [k, 1])));
    const started = readdirSync(marks).map((f) => f.split('.'));
    expect(started.map(([k]) => k).sort()).toEqual([...keys].sort());
    for (const [, uid] of started) expect(Number(uid)).not.toBe(0);

    // No push credential, svc token or engine token in an agent's environment; none in npm's.
    for (const f of readdirSync(marks)) {
      const env = readFileSync(join(marks, f), 'utf8');
      expect(env).toContain(SECRETS.ANTHROPIC_API_KEY);
      for (const name of NOT_FOR_AGENTS) expect(env, `${name} in ${f}`).not.toContain(secrets[name]);
    }
    const installs = readdirSync(join(top, 'installs'));
    expect(installs.length).toBe(3);
    for (const f of installs) {
      const env = readFileSync(join(top, 'installs', f), 'utf8');
      for (const name of [...NOT_FOR_AGENTS, 'ANTHROPIC_API_KEY'] as const) expect(env, `${name} in npm's environment`).not.toContain(secrets[name]);
    }
    // The reports each template asks for are where it says.
    expect(existsSync(join(gh.dir, 'work', 'out', 'svc-junit-1.xml')), outs).toBe(true);
    expect(existsSync(join(gl.dir, 'builds', 'acme', 'shop', 'out', 'svc-junit-2.xml')), outs).toBe(true);
    expect(existsSync(join(bk.dir, 'builds', 'shop', 'out', 'svc-junit-2.xml')), outs).toBe(true);
    expect(existsSync(join(k8s.dir, 'mounts', 'work', 'out', 'svc-junit-3.xml')), outs).toBe(true);
  });
});
