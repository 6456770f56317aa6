// The ready-made fleets run as written (docs/fleets.md): each template's own commands,
// taken from the file (test/examples/engines.ts), as four workers at once over one local service
// and one bare `origin`, as root through the default agent pool: one worker per template, then
// each template as a fleet of its own (four indices of one matrix, so their keys must differ). Stand-ins for
// what this machine cannot have: a `claude` first on PATH that commits (and records its uid and
// environment), an `npm` that installs svc only from the tarball name `npm pack` makes, a
// `buildkite-agent` that hands out the step's secrets, and the image's svc for Kubernetes. Every
// card's work must end on origin, every card be implemented once, and no secret but the agent's
// own key reach an agent or the install.
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { BIN, makeRepo, run } from '../support/cli.js';
import { startTestService, type TestService } from '../support/service.js';
import { buildkite, buildkiteCloneUrl, github, gitlab, gitlabCloneUrl, kubernetes, type Plan, type Site } from './engines.js';

const ROOT = join(import.meta.dirname, '..', '..');
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

let pack: string;
let base: string;

/** A folder everyone may traverse (the pool users exec the stand-ins and write their marks). */
function openDir(path: string, mode = 0o755): string {
  mkdirSync(path, { recursive: true });
  chmodSync(path, mode);
  return path;
}

beforeAll(async () => {
  pack = JSON.parse(await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], ROOT))[0].filename;
  // The user's repository, holding the tarball the templates install from (vendor/).
  base = await makeRepo();
  mkdirSync(join(base, 'vendor'));
  writeFileSync(join(base, 'vendor', pack), 'the tarball npm pack makes\n');
  await run('git', ['-C', base, 'add', 'vendor']);
  await run('git', ['-C', base, '-c', 'user.name=u', '-c', 'user.email=u@example.invalid', 'commit', '-qm', 'vendor svc']);
}, 60_000);

type Kind = 'github' | 'gitlab' | 'buildkite' | 'kubernetes';

/** One fleet's world: a service, origin (`srv/acme/shop.git`), the agents' marks, npm's records. */
interface World {
  s: TestService;
  top: string;
  marks: string;
  installs: string;
  secrets: Record<string, string>;
  origin: string;
}

async function world(): Promise<World> {
  const s = await startTestService();
  const top = openDir(mkdtempSync(join(tmpdir(), 'svc-fleet-run-')));
  const origin = join(top, 'srv', 'acme', 'shop.git');
  await run('git', ['clone', '-q', '--bare', base, origin]);
  return {
    s,
    top,
    origin,
    marks: openDir(join(top, 'marks'), 0o1777),
    installs: openDir(join(top, 'installs'), 0o1777),
    secrets: { ...SECRETS, SVC_TOKEN: s.token },
  };
}

/** The stand-ins of one worker, first on its PATH; `image`: svc is already installed (Kubernetes). */
function tools(w: World, dir: string, image: boolean): string {
  const bin = openDir(join(dir, 'bin'));
  const svc = `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} "$@"\n`;
  const write = (name: string, text: string) => writeFileSync(join(bin, name), text, { mode: 0o755 });
  write(
    'claude',
    // It also tries the Kubernetes workers' push token, a file of root's.
    `#!/bin/sh\ncat > /dev/null\nm="${w.marks}/$SVC_CARD_KEY.$(id -u).$$"\nenv > "$m"\n` +
      `cat "${w.top}"/kubernetes-*/mounts/git-token/GIT_TOKEN >> "$m" 2>&1\nsleep 1\n` +
      `git commit -q --allow-empty -m "$SVC_CARD_KEY: done" || exit 1\n` +
      `echo '{"type":"result","subtype":"success","is_error":false,"result":"done","total_cost_usd":0}'\n`,
  );
  write(
    'npm',
    `#!/bin/sh\nenv > "${w.installs}/$$"\n[ "$1 $2" = "install -g" ] || { echo "npm stand-in: not an install -g: $*" >&2; exit 1; }\nshift 2\n` +
      `for a; do case "$a" in\n  ./vendor/${pack}) [ -f "$a" ] || { echo "npm ERR! ENOENT $a" >&2; exit 1; } ;;\n` +
      `  @anthropic-ai/claude-code) ;;\n  *) echo "npm stand-in: not what npm pack makes: $a" >&2; exit 1 ;;\nesac; done\n` +
      `printf '%s' '${svc.replace(/'/g, `'\\''`)}' > "${bin}/svc" && chmod 755 "${bin}/svc"\n`,
  );
  write(
    'buildkite-agent',
    `#!/bin/sh\ncase "$1 $2" in\n  "secret get") exec cat "${join(dir, 'bk-secrets')}/$3" ;;\n  annotate*) cat > /dev/null ;;\n  *) exit 1 ;;\nesac\n`,
  );
  mkdirSync(join(dir, 'bk-secrets'));
  for (const [k, v] of Object.entries(w.secrets)) writeFileSync(join(dir, 'bk-secrets', k), v, { mode: 0o600 });
  if (image) write('svc', svc);
  return bin;
}

function site(w: World, kind: Kind, index: number): Site {
  const dir = openDir(join(w.top, `${kind}-${index}`));
  const bin = tools(w, dir, kind === 'kubernetes');
  const home = join(dir, 'home');
  mkdirSync(home);
  return {
    index,
    serviceUrl: w.s.url,
    project: w.s.projectKey,
    serverUrl: `file://${join(w.top, 'srv')}`,
    projectPath: 'acme/shop',
    secrets: w.secrets,
    dir,
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

interface Ran {
  name: string;
  code: number | null;
  out: string;
  junit: string;
}

/** The plan of a worker, the URL its engine's checkout leaves as origin, and where its JUnit goes. */
function planOf(kind: Kind, st: Site): { plan: Plan; cloneUrl?: string; junit: string } {
  if (kind === 'github') return { plan: github(st), junit: join(st.dir, 'work', 'out', `svc-junit-${st.index + 1}.xml`) };
  if (kind === 'gitlab')
    return { plan: gitlab(st), cloneUrl: gitlabCloneUrl(st), junit: join(st.dir, 'builds', 'acme', 'shop', 'out', `svc-junit-${st.index + 1}.xml`) };
  if (kind === 'buildkite')
    return { plan: buildkite(st), cloneUrl: buildkiteCloneUrl(st), junit: join(st.dir, 'builds', 'shop', 'out', `svc-junit-${st.index}.xml`) };
  return { plan: kubernetes(st), junit: join(st.dir, 'mounts', 'work', 'out', `svc-junit-${st.index}.xml`) };
}

/** A worker: the engine's checkout and mounts, then its shells in order. */
async function start(w: World, kind: Kind, index: number): Promise<Ran> {
  const { plan, cloneUrl, junit } = planOf(kind, site(w, kind, index));
  const name = `${kind} ${index}`;
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
    if (r.code !== 0) return { name, code: r.code, out, junit };
  }
  return { name, code: 0, out, junit };
}

/** Runs the fleet over `cards` new cards and checks all that a fleet promises. */
async function fleet(kinds: [Kind, number][], cards: number): Promise<void> {
  const w = await world();
  try {
    const { s } = w;
    const keys = Array.from(
      { length: cards },
      (_, i) => s.admin.createWorkItem({ projectKey: s.projectKey, kind: 'task', type: 'code', title: `card ${i + 1}` }).key,
    );
    const workers = await Promise.all(kinds.map(([kind, index]) => start(w, kind, index)));
    const outs = workers.map((r) => `--- ${r.name} (exit ${r.code})\n${r.out}`).join('\n');
    expect(
      workers.map((r) => [r.name, r.code]),
      outs,
    ).toEqual(workers.map((r) => [r.name, 0]));

    // Each worker did work of its own, so each one's push is what put it on origin.
    for (const r of workers) expect(r.out, outs).toMatch(/ implemented in /);
    // Every card's work is on origin, as the agent committed it.
    const branches = (await run('git', ['for-each-ref', '--format=%(refname:lstrip=2) %(subject)', 'refs/heads/svc/'], w.origin)).trim().split('\n');
    expect(branches.sort(), outs).toEqual(keys.map((k) => `svc/${k} ${k}: done`).sort());
    // Every card implemented once across all runs, and its agent started once, as a pool user.
    const implemented = s.db
      .prepare(`SELECT work_item_key AS k, COUNT(*) AS n FROM dispatch_cards WHERE disposition = 'implemented' GROUP BY work_item_key`)
      .all() as { k: string; n: number }[];
    expect(Object.fromEntries(implemented.map((r) => [r.k, r.n])), outs).toEqual(Object.fromEntries(keys.map((k) => [k, 1])));
    const started = readdirSync(w.marks).map((f) => f.split('.'));
    expect(started.map(([k]) => k).sort()).toEqual([...keys].sort());
    for (const [, uid] of started) expect(Number(uid)).not.toBe(0);

    // No push credential, svc token or engine token in an agent's environment; none in npm's.
    for (const f of readdirSync(w.marks)) {
      const env = readFileSync(join(w.marks, f), 'utf8');
      expect(env).toContain(SECRETS.ANTHROPIC_API_KEY);
      for (const name of NOT_FOR_AGENTS) expect(env, `${name} in ${f}`).not.toContain(w.secrets[name]);
    }
    const installs = readdirSync(w.installs);
    expect(installs.length).toBe(kinds.filter(([k]) => k !== 'kubernetes').length);
    for (const f of installs) {
      const env = readFileSync(join(w.installs, f), 'utf8');
      for (const name of [...NOT_FOR_AGENTS, 'ANTHROPIC_API_KEY']) expect(env, `${name} in npm's environment`).not.toContain(w.secrets[name]);
    }
    // The reports each template asks for are where it says.
    for (const r of workers) expect(existsSync(r.junit), `${r.name}: ${r.junit}`).toBe(true);
  } finally {
    await w.s.close();
  }
}

describe.skipIf(!isRoot)('the ready-made fleets, run as written', () => {
  it('four workers, one per template, lose no card’s work and run none twice; no push credential reaches an agent', { timeout: 60_000 }, async () => {
    await fleet(
      [
        ['github', 0],
        ['gitlab', 1],
        ['buildkite', 2],
        ['kubernetes', 3],
      ],
      8,
    );
  });

  for (const kind of ['github', 'gitlab', 'buildkite', 'kubernetes'] as const) {
    it(`${kind}: a fleet of four of its workers (indices 0–3) does the same`, { timeout: 60_000 }, async () => {
      await fleet(
        [0, 1, 2, 3].map((i): [Kind, number] => [kind, i]),
        8,
      );
    });
  }
});
