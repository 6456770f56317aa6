// Secret hygiene: a representative set of CLI calls — log in, auth status, config
// list, whoami --verbose, a local run with --send-logs whose agent prints token-shaped strings and
// its whole environment and every --report format, runs show, logs, runs report, failing calls, recover, and a hosted run (its own
// svc_run_ credential, git tokens traded for it) — then a scan of EVERYTHING produced: stdout and
// stderr of every call, every file under the state and config folders (and the hosted workspace),
// the events the service stored, the service's database file, and the argv and environment each
// agent saw (dumped by the agent itself). No token in play may appear anywhere, nor any string of
// a well-known token shape where svc wrote it. The only place the PAT may live is the config file,
// and that file is mode 0600.
// What svc prints, writes and sends is the same from the command line run in-process
// (test/support/svc-in-process.ts), so most calls run there. What it hands an agent crosses a
// process boundary: the CI job with SVC_TOKEN in its environment is the real bin/svc.js, whose
// agent inherits from a real process environment (every agent is a real process either way).
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openDatabase } from '../../src/server/db.js';
import { createRepository } from '../../src/server/git/index.js';
import { MODULES } from '../../src/server/modules.js';
import { isolatedEnv, makeRepo, runCli, type CliEnv, type CliResult } from '../support/cli.js';
import { svcInProcess } from '../support/svc-in-process.js';
import { startLocalServer, type LocalServer } from '../support/server-process.js';
import { filesUnder, scanForSecrets } from './support.js';

/** Shapes no output, file or stored event of svc may hold (docs/dispatch.md#the-wire redaction list). */
const SHAPES: [string, RegExp][] = [
  ['svc_pat_', /svc_pat_[A-Za-z0-9]{8,}/],
  ['svc_run_', /svc_run_[A-Za-z0-9]{8,}/],
  ['ghs_', /ghs_[A-Za-z0-9]{16,}/],
  ['ghp_', /ghp_[A-Za-z0-9]{16,}/],
  ['github_pat_', /github_pat_[A-Za-z0-9_]{16,}/],
  ['sk-', /\bsk-[A-Za-z0-9_-]{16,}/],
  ['Bearer value', /Bearer\s+(?!\[REDACTED\])[A-Za-z0-9._~+/=-]{12,}/i],
];

// The agent prints these (built at run time, so its script holds none of them literally).
const AGENT = `#!/bin/sh
printf '%s\\n' "$0" "$@" > "$TRUST_DUMPS/argv-$SVC_CARD_KEY-$$.txt"
env > "$TRUST_DUMPS/env-$SVC_CARD_KEY-$$.txt"
x=$(printf 'A%.0s' 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36)
echo "a personal token: svc_""pat_$x"
echo "a run token: svc_""run_$x"
echo "git tokens: gh""s_$x gh""p_$x github_""pat_$x"
echo "an api key: s""k-$x"
echo "Authorization: Bearer $x$x"
echo "curl -H 'authorization: token $x'"
echo "--- my environment ---"
env
echo "done with $SVC_CARD_KEY"
`;

let server: LocalServer;
let root: string;
let dumps: string;
let agentCmd: string;
const calls: { args: string[]; r: CliResult }[] = [];
const homes: string[] = [];

async function svc(args: string[], env: CliEnv, opts: { cwd?: string; input?: string } = {}): Promise<CliResult> {
  const r = await svcInProcess(args, { env, ...opts });
  calls.push({ args, r });
  return r;
}

/** `svc ARGS` as a real process, for what only a process boundary shows; scanned like the rest. */
async function spawned(args: string[], env: CliEnv): Promise<CliResult> {
  const r = await runCli(args, { env, timeoutMs: 120_000 });
  calls.push({ args, r });
  return r;
}

function home(extra: CliEnv = {}): CliEnv {
  const env = isolatedEnv({ SVC_BASE_URL: server.url, SVC_PROJECT: 'DEMO', SVC_HEARTBEAT_INTERVAL: '1s', TRUST_DUMPS: dumps, ...extra });
  homes.push(env.HOME!);
  return env;
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'svc-secrets-'));
  dumps = join(root, 'agent-dumps');
  mkdirSync(dumps);
  const gitRoot = join(root, 'git-root');
  await createRepository(gitRoot, 'acme/widgets', { seedCommit: true });
  server = await startLocalServer(['--git-root', gitRoot]);
  const agent = join(root, 'agent.sh');
  writeFileSync(agent, AGENT, { mode: 0o755 });
  agentCmd = `sh ${agent} {key} {branch}`;
}, 60_000);

afterAll(async () => {
  const violations = await server?.stop();
  expect(violations ?? [], 'responses that break the contract document').toEqual([]);
});

describe('secret hygiene across a representative set of CLI calls', () => {
  test('the scan finds what it looks for (so an empty result means something)', () => {
    const x = 'Q'.repeat(36);
    const planted = [`svc_pat_${x}`, `svc_run_${x}`, `ghs_${x}`, `ghp_${x}`, `github_pat_${x}`, `sk-${x}`, `Bearer ${x}`];
    for (const text of planted) expect(SHAPES.filter(([, re]) => re.test(`log: ${text} end`)).length, text).toBeGreaterThan(0);
    for (const text of ['Authorization: [REDACTED]', 'Bearer [REDACTED]', 'a personal token: [REDACTED]', 'task-list desk-top']) {
      expect(
        SHAPES.filter(([, re]) => re.test(text)).map(([n]) => n),
        text,
      ).toEqual([]);
    }
    expect(scanForSecrets([{ where: 'x', text: `a svc_pat_${x} b` }], [`svc_pat_${x}`])).toHaveLength(1);
  });

  test('no token in any output, file, stored event, agent argv or environment; the config file is 0600', async () => {
    const pat = server.token;

    // --- a user who logged in (the token lives in the config file only) ---
    // Calls that do not depend on each other run side by side: the scan looks at what each left
    // behind, not at their order.
    const user = home();
    expect((await svc(['auth', 'login', '--with-token'], user, { input: `${pat}\n` })).code).toBe(0);
    const reports = join(user.HOME!, 'reports');

    const reads = async () => {
      expect((await svc(['auth', 'status'], user)).code).toBe(0);
      expect((await svc(['auth', 'status', '--json'], user)).code).toBe(0);
      expect((await svc(['config', 'list'], user)).code).toBe(0);
      expect((await svc(['config', 'list', '--json'], user)).code).toBe(0);
      expect((await svc(['whoami', '--verbose'], user)).code).toBe(0);
      expect((await svc(['api', 'GET', '/me', '--verbose'], user)).code).toBe(0);
    };

    // Failing calls: a missing item, an unknown path, a refused token, a bad flag.
    const failures = async () => {
      expect((await svc(['items', 'show', 'DEMO-999', '--verbose'], user)).code).toBe(4);
      expect((await svc(['api', 'GET', '/nope', '--verbose'], user)).code).toBe(2);
      expect((await svc(['api', 'GET', '/work-items/DEMO-999', '--verbose'], user)).code).toBe(4);
      expect((await svc(['whoami', '--verbose'], home({ SVC_TOKEN: `svc_pat_${'Z'.repeat(32)}` }))).code).toBe(3);
      expect((await svc(['run', 'DEMO-6', '--frob'], user)).code).toBe(2);
    };

    // A local run whose agent prints token shapes and its environment, with --send-logs; then
    // what reads it back, and (once recover has looked at the user's runs) a hosted run.
    const local = async () => {
      const repo = await makeRepo();
      const ran = await svc(
        [
          'run',
          'DEMO-6',
          '--agent-cmd',
          agentCmd,
          '--agent-env',
          'TRUST_DUMPS',
          '--send-logs',
          '--allow-empty',
          '--repo',
          repo,
          '--verbose',
          '--json',
          ...['junit', 'markdown', 'html', 'json'].flatMap((f) => ['--report', `${f}:${reports}/run.${f}`]),
        ],
        user,
      );
      expect(ran.code, ran.stderr).toBe(0);
      const runId = (JSON.parse(ran.stdout) as { runId: string }).runId;
      const codes = await Promise.all([
        svc(['runs', 'show', runId], user),
        svc(['runs', 'show', runId, '--json'], user),
        svc(['logs', runId], user),
        svc(['logs', runId, 'DEMO-6', '--json'], user),
        ...['junit', 'markdown', 'html', 'json'].map((f) => svc(['runs', 'report', runId, '--format', f], user)),
      ]);
      for (const r of codes) expect(r.code, r.stderr).toBe(0);
      expect((await svc(['runs', 'recover'], user)).code).toBe(0);
      return runId;
    };

    // --- a CI job with SVC_TOKEN in its environment, running with --send-logs ---
    // Spawned: the token sits in svc's own process environment, the one a careless spawn of the
    // agent would pass on.
    const ci = home({ SVC_TOKEN: pat });
    const ciJob = async () => {
      const ciRun = await spawned(
        ['run', 'DEMO-3', '--agent-cmd', agentCmd, '--agent-env', 'TRUST_DUMPS', '--send-logs', '--allow-empty', '--repo', await makeRepo(), '--json'],
        ci,
      );
      expect(ciRun.code, ciRun.stderr).toBe(0);
      return (JSON.parse(ciRun.stdout) as { runId: string }).runId;
    };

    // --- a hosted run: a person opens it, the platform mints its credential, the runner executes it ---
    const workspace = join(root, 'work');
    const hosted = async () => {
      const made = await svc(['api', 'POST', '/projects/DEMO/work-items', '--input', '-', '--json'], user, {
        input: JSON.stringify({ kind: 'task', type: 'chore', title: 'Hosted card', targetRepositories: ['acme/widgets'] }),
      });
      expect(made.code, made.stderr).toBe(0);
      const hostedKey = (JSON.parse(made.stdout) as { key: string }).key;
      const opened = await svc(['run', hostedKey, '--hosted', '--json'], user);
      expect(opened.code, opened.stderr).toBe(0);
      const hostedRunId = (JSON.parse(opened.stdout) as { run: { id: string } }).run.id;
      // `server run-token` shows the credential once, by design (the platform's channel): not scanned.
      const minted = await svcInProcess(['server', 'run-token', hostedRunId, '--db', server.db], { env: isolatedEnv() });
      expect(minted.code, minted.stderr).toBe(0);
      const runToken = minted.stdout.trim();
      mkdirSync(workspace, { recursive: true });
      const runner = home({ SVC_RUN_ID: hostedRunId, SVC_RUN_TOKEN: runToken, GIT_AUTHOR_NAME: 'runner', GIT_AUTHOR_EMAIL: 'runner@example.invalid' });
      delete runner.SVC_PROJECT;
      const attached = await svc(['attach', '--agent-cmd', agentCmd, '--agent-env', 'TRUST_DUMPS', '--send-logs', '--allow-empty', '--json'], runner, {
        cwd: workspace,
      });
      expect(attached.code, attached.stderr).toBe(0);
      return { hostedRunId, runToken };
    };

    const localRun = local();
    const [runId, ciRunId, { hostedRunId, runToken }] = await Promise.all([localRun, ciJob(), localRun.then(hosted), reads(), failures()]);

    // ------------------------------------------------------------------ the scan
    const secrets = [pat, runToken];
    const db = openDatabase(server.db, MODULES);
    let events: { run_id: string; seq: number; body: string | null }[];
    let gitTokens: number;
    try {
      events = db
        .prepare('SELECT run_id, seq, body FROM dispatch_events WHERE run_id IN (?, ?, ?) ORDER BY run_id, seq')
        .all(runId, ciRunId, hostedRunId) as typeof events;
      gitTokens = Number((db.prepare('SELECT COUNT(*) AS n FROM git_tokens WHERE run_id = ?').get(hostedRunId) as { n: number }).n);
    } finally {
      db.close();
    }
    // There was something to leak: bodies were stored for all three runs, git tokens were traded.
    expect(new Set(events.filter((e) => e.body).map((e) => e.run_id))).toEqual(new Set([runId, ciRunId, hostedRunId]));
    expect(gitTokens).toBeGreaterThan(0);
    const bodies = events
      .filter((e) => e.body)
      .map((e) => e.body!)
      .join('\n');
    // The redacted shapes did reach the service, as [REDACTED] (the agent's lines are there).
    expect(bodies).toContain('a personal token: [REDACTED]');
    expect(bodies).toContain('--- my environment ---');

    // Texts svc produced: outputs, state/config/workspace files, stored events.
    const configFiles: string[] = [];
    const texts: { where: string; text: string }[] = [];
    for (const { args, r } of calls) {
      texts.push({ where: `stdout of svc ${args.join(' ')}`, text: r.stdout }, { where: `stderr of svc ${args.join(' ')}`, text: r.stderr });
    }
    for (const h of homes) {
      for (const f of filesUnder(h)) {
        // The one place the PAT may be stored: the config file of the user who logged in.
        if (f.path.startsWith(join(h, 'config')) && f.text.includes(pat)) {
          configFiles.push(f.path);
          expect(f.mode.toString(8), `${f.path} holds the token`).toBe('600');
          continue;
        }
        texts.push({ where: f.path, text: f.text });
      }
    }
    for (const f of filesUnder(workspace)) if (!f.path.includes('/.git/objects/')) texts.push({ where: f.path, text: f.text });
    texts.push({ where: 'stored event bodies', text: bodies });
    expect(configFiles, 'the login stored the token in exactly one config file').toHaveLength(1);
    expect(texts.filter((t) => t.where.endsWith('journal.jsonl')).length).toBeGreaterThanOrEqual(2);
    expect(texts.some((t) => /\/logs\/[^/]+\.log$/.test(t.where))).toBe(true);
    // The reports were scanned too; html and json hold the tail of the agent's output (its environment).
    const reportTexts = texts.filter((t) => t.where.startsWith(reports));
    expect(reportTexts).toHaveLength(4);
    for (const t of reportTexts) expect(t.text, t.where).toContain('DEMO-6');
    for (const t of reportTexts.filter((r) => /\.(html|json)$/.test(r.where))) expect(t.text, t.where).toContain('done with DEMO-6');

    const leaks = scanForSecrets(texts, secrets);
    for (const { where, text } of texts) {
      for (const [name, shape] of SHAPES) if (shape.test(text)) leaks.push(`${where}: a ${name} shape: ${shape.exec(text)![0].slice(0, 14)}…`);
    }
    // The in-process calls ran in this very process: none left a token in its environment.
    leaks.push(
      ...scanForSecrets(
        Object.entries(process.env).map(([k, v]) => ({ where: `this process's ${k}`, text: v ?? '' })),
        secrets,
      ),
    );
    // The database holds hashes, never a raw token.
    leaks.push(...scanForSecrets([{ where: 'the service database', text: readFileSync(server.db).toString('latin1') }], secrets));

    // The agents' own view: argv and environment, dumped by the agent (never through svc).
    const dumped = readdirSync(dumps).map((name) => ({ where: `agent dump ${name}`, text: readFileSync(join(dumps, name), 'utf8') }));
    expect(dumped.filter((d) => d.where.includes('env-'))).toHaveLength(3);
    leaks.push(...scanForSecrets(dumped, secrets));
    for (const d of dumped) {
      for (const [name, shape] of SHAPES) if (shape.test(d.text)) leaks.push(`${d.where}: a ${name} shape`);
      if (/^(SVC_TOKEN|SVC_RUN_TOKEN|GITHUB_TOKEN|GH_TOKEN)=/m.test(d.text)) leaks.push(`${d.where}: a token variable`);
    }
    expect(leaks).toEqual([]);

    // Files svc writes for a run are private to the user (logs may hold project code).
    for (const h of homes) {
      for (const f of filesUnder(join(h, 'state'))) expect(`${f.path} ${(f.mode & 0o077).toString(8)}`).toBe(`${f.path} 0`);
      if (statSync(join(h, 'state'), { throwIfNoEntry: false })) {
        for (const dir of readdirSync(join(h, 'state', 'runs'))) {
          expect((statSync(join(h, 'state', 'runs', dir)).mode & 0o077).toString(8), dir).toBe('0');
        }
      }
    }
  }, 180_000);
});
