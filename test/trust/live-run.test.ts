// Nothing touches a live run, with real processes: `svc server`, `svc run` with a slow
// agent, and `svc runs recover` / `svc worktrees prune` / signals beside it. What only reads or
// closes beside the live run (recover, prune, a second run) runs in this process, another pid than
// the live run's; a recover that must see this process as the live one is spawned.
import type { ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAdmin } from '../../src/server/admin.js';
import { openDatabase, type Database } from '../../src/server/db.js';
import { MODULES } from '../../src/server/modules.js';
import { pendingOpenPath } from '../../src/dispatch/state/folder.js';
import { selfMark } from '../../src/dispatch/state/run-lock.js';
import { isolatedEnv, makeRepo, run as run_, runCli, type CliEnv } from '../support/cli.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { rowsOf } from './soak-harness.js';
import { readJournal, waitFor, spawnSvc, trustEnv } from './support.js';
import { svcInProcess } from '../support/svc-in-process.js';

let server: ServerProcess;
let db: Database;
let root: string;
/**
 * Survives SIGTERM and starts a child that ignores it (an ignored signal is inherited across exec);
 * the agent itself notes each SIGTERM in "$TRUST_PIDS.term" so a test can see it was sent. Each
 * signal handling is in place before it is announced: the trap before the pid, the child's ignore
 * before "$TRUST_PIDS.child". A forked child is a member of the group before it has run its `trap`,
 * so counting members raced svc's SIGTERM under load and the child died of it.
 */
let stubbornAgent: string;
const groups: number[] = [];

beforeAll(async () => {
  server = await startServerProcess();
  db = openDatabase(server.db, MODULES);
  root = mkdtempSync(join(tmpdir(), 'svc-live-'));
  const agent = join(root, 'stubborn.sh');
  writeFileSync(
    agent,
    `#!/bin/sh
trap 'echo $$ >> "$TRUST_PIDS.term"' TERM
(trap '' TERM; : > "$TRUST_PIDS.child"; exec sleep 60) &
child=$!
echo $$ >> "$TRUST_PIDS"
echo "started $SVC_CARD_KEY"
# A trapped signal ends the wait, not the script: wait again while the child lives.
while kill -0 "$child" 2>/dev/null; do wait "$child"; done
`,
  );
  chmodSync(agent, 0o755);
  stubbornAgent = `sh ${agent}`;
});

afterAll(async () => {
  for (const pgid of groups) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // Gone, as it should be.
    }
  }
  db?.close();
  await server?.stop();
});

function card(title: string): string {
  return createAdmin(db).createWorkItem({ projectKey: 'DEMO', kind: 'task', title, type: 'chore' }).key;
}

const envFor = (home: string): CliEnv => trustEnv(server, home, join(home, 'pids'));

/**
 * Resolves once svc has taken a first SIGINT (it says so): two signals sent back to back can merge
 * into one, since they do not queue.
 */
async function firstSigintTaken(run: ReturnType<typeof spawnSvc>): Promise<void> {
  await waitFor('svc to take the first SIGINT', () => run.out().stderr.includes('press Ctrl-C again'), 10_000);
}

/** Starts `svc run` over one fresh card with the stubborn agent; resolves once the agent runs. */
async function liveRun(home: string, extra: string[] = []) {
  const env = envFor(home);
  const repo = await makeRepo();
  const key = card('live run card');
  const run = spawnSvc(
    env,
    ['run', key, '--agent-cmd', stubbornAgent, '--agent-env', 'TRUST_PIDS', '--allow-empty', '--kill-grace', '20s', '--repo', repo, ...extra],
    'pipe',
  );
  const pgid = await waitFor(
    'the agent to start',
    () => (existsSync(env.TRUST_PIDS!) ? Number(readFileSync(env.TRUST_PIDS!, 'utf8').split('\n')[0]) : null),
    20_000,
  );
  groups.push(pgid);
  const runId = readdirSync(join(home, 'state', 'runs'))[0]!;
  return { env, repo, key, run, pgid, runId };
}

/** Resolves once the agent's child runs in its group, ignoring SIGTERM. */
async function childIgnoresTerm(env: CliEnv, pgid: number): Promise<void> {
  await waitFor("the agent's child", () => existsSync(`${env.TRUST_PIDS}.child`) && liveMembers(pgid).length >= 2, 10_000);
}

/** Live (not zombie) processes of process group `pgid`. */
function liveMembers(pgid: number): string[] {
  const out: string[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid && fields[0] !== 'Z') out.push(`${name} ${stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))}`);
    } catch {
      // Gone meanwhile.
    }
  }
  return out;
}

const statusOf = (runId: string) => rowsOf(db).find((r) => r.id === runId);

// Each has its own home, card and repository, and mostly waits on processes: side by side.
describe.concurrent('recover and prune beside a live run', () => {
  test('recover skips the locked run and prune keeps its worktree; both say why; the run then closes normally', async () => {
    const home = mkdtempSync(join(tmpdir(), 'svc-live-home-'));
    const { env, repo, key, run, runId } = await liveRun(home);
    const worktrees = await svcInProcess(['worktrees', 'prune', '--repo', repo], { env });
    expect(worktrees.code, worktrees.stderr).toBe(0);
    expect(worktrees.stderr).toContain(`kept ${key}: in use by live run ${runId}`);
    expect(await run_('git', ['worktree', 'list', '--porcelain'], repo)).toContain(`branch refs/heads/svc/${key}`);

    const recovered = await svcInProcess(['runs', 'recover', '--json'], { env });
    expect(recovered.code, recovered.stderr).toBe(0);
    expect(JSON.parse(recovered.stdout)).toEqual([expect.objectContaining({ runId, action: 'skipped', detail: expect.stringContaining('live in process') })]);
    const named = await svcInProcess(['runs', 'recover', runId], { env });
    expect(named.stderr).toContain(`run ${runId} is live in process`);
    // The service still has the run running, and the run goes on to close by its own hand.
    expect(statusOf(runId)?.status).toBe('running');
    run.child.kill('SIGINT');
    await firstSigintTaken(run);
    run.child.kill('SIGINT');
    expect((await run.done).code).toBe(130);
  }, 60_000);

  test('a second invocation with the same idempotency key leaves the live run to its process', async () => {
    const home = mkdtempSync(join(tmpdir(), 'svc-live-home-'));
    const { env, repo, key, run, runId } = await liveRun(home, ['--idempotency-key', 'ci-job-7']);
    const journal = join(home, 'state', 'runs', runId, 'journal.jsonl');
    // The live run's own stream settles first (its first event acked): under load that ack landed
    // after the read below, and looked like a write by the second invocation.
    const settled = () => {
      const view = readJournal(journal);
      return view.events.length > 0 && view.acks.some((a) => a.n === view.events.length);
    };
    await waitFor("the live run's events to be acked", settled, 20_000);
    const before = readFileSync(journal, 'utf8');
    const second = await svcInProcess(
      ['run', key, '--agent-cmd', stubbornAgent, '--agent-env', 'TRUST_PIDS', '--allow-empty', '--idempotency-key', 'ci-job-7', '--repo', repo],
      { env },
    );
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`run ${runId} is live in process ${run.child.pid}`);
    expect(readFileSync(journal, 'utf8')).toBe(before);
    expect(statusOf(runId)?.status).toBe('running');
    run.child.kill('SIGINT');
    await firstSigintTaken(run);
    run.child.kill('SIGINT');
    expect((await run.done).code).toBe(130);
  }, 60_000);

  test('a pending open of a live process is left alone', async () => {
    const home = mkdtempSync(join(tmpdir(), 'svc-live-home-'));
    const env = envFor(home);
    const path = pendingOpenPath(join(home, 'state'), 'key-of-a-live-open');
    mkdirSync(join(home, 'state', 'opening'), { recursive: true });
    // This test's own process plays the one still making the open.
    const pendingCard = card('pending card');
    writeFileSync(
      path,
      JSON.stringify({
        idempotencyKey: 'key-of-a-live-open',
        owner: selfMark(),
        open: { projectKey: 'DEMO', command: 'run', cards: [{ workItemKey: pendingCard }], idempotencyKey: 'key-of-a-live-open' },
        record: {
          baseUrl: server.url,
          projectKey: 'DEMO',
          command: 'run',
          originalCommand: 'run',
          scopeKey: null,
          openedAt: new Date().toISOString(),
          cards: [],
          options: {},
        },
      }),
    );
    // Runs over the pending open's card (the tests beside this one open runs of their own).
    const runsOfCard = () => Number((db.prepare('SELECT count(*) AS n FROM dispatch_cards WHERE work_item_key = ?').get(pendingCard) as { n: number }).n);
    const before = runsOfCard();
    const recovered = await runCli(['runs', 'recover', '--json'], { env });
    expect(recovered.code, recovered.stderr).toBe(0);
    expect(JSON.parse(recovered.stdout)).toEqual([expect.objectContaining({ action: 'skipped', detail: `open in progress in live process ${process.pid}` })]);
    expect(existsSync(path)).toBe(true);
    expect(runsOfCard()).toBe(before);
  }, 30_000);
});

describe('agents never outlive svc', () => {
  test('a second SIGINT exits at once and SIGKILLs an agent that ignores SIGTERM, with its child', async () => {
    const home = mkdtempSync(join(tmpdir(), 'svc-live-home-'));
    const { run, pgid, runId, env } = await liveRun(home);
    await childIgnoresTerm(env, pgid);
    run.child.kill('SIGINT');
    await firstSigintTaken(run);
    // svc sent the group SIGTERM (the agent saw it) and it was ignored: the agent and its child
    // still run within the 20 s grace.
    await waitFor('the agent to see SIGTERM', () => existsSync(`${env.TRUST_PIDS}.term`), 10_000);
    expect(liveMembers(pgid).length).toBeGreaterThanOrEqual(2);
    const second = Date.now();
    run.child.kill('SIGINT');
    const ended = await run.done;
    expect(ended.code, run.out().stderr).toBe(130);
    expect(Date.now() - second).toBeLessThan(3_000);
    expect(run.out().stderr).toContain('svc: exiting at once: the run stays open until `svc runs recover` closes it');
    // SIGKILL was sent before svc exited; the kernel ends the group's processes a moment later (on a
    // loaded machine the `sleep` was still listed right after svc's exit): wait on that, bounded.
    await waitFor('the agent group to die after SIGKILL', () => liveMembers(pgid).length === 0, 5_000);
    const recovered = await svcInProcess(['runs', 'recover'], { env });
    expect(recovered.code, recovered.stderr).toBe(0);
    expect(statusOf(runId)).toMatchObject({ status: 'cancelled', stop_reason: 'interrupted' });
  }, 60_000);

  test('after kill -9 of svc, recover kills the leftover agent group (from the journal) before closing the run', async () => {
    const home = mkdtempSync(join(tmpdir(), 'svc-live-home-'));
    const { run, pgid, runId, env } = await liveRun(home);
    await childIgnoresTerm(env, pgid);
    // svc journals the group right after spawn returns; the agent may start its child first, so on
    // a loaded machine the test can look between the two. The kill comes only once it is there.
    const journalFile = join(home, 'state', 'runs', runId, 'journal.jsonl');
    await waitFor("the agent's record in the journal", () => readFileSync(journalFile, 'utf8').includes(`"t":"agent"`), 10_000);
    const journal = readFileSync(journalFile, 'utf8');
    expect(journal).toContain(`"t":"agent"`);
    expect(journal).toContain(`"pgid":${pgid}`);
    run.child.kill('SIGKILL');
    await run.done;
    expect(liveMembers(pgid).length, 'kill -9 of svc leaves its agent running').toBeGreaterThanOrEqual(2);
    const recovered = await svcInProcess(['runs', 'recover'], { env });
    expect(recovered.code, recovered.stderr).toBe(0);
    expect(recovered.stderr).toContain(`stopped the leftover agent of`);
    await waitFor('the leftover group to die', () => liveMembers(pgid).length === 0, 5_000);
    expect(statusOf(runId)).toMatchObject({ status: 'cancelled', stop_reason: 'interrupted' });
  }, 60_000);
});

describe('redaction keeps one buffer per stream', () => {
  test('a token written half to stdout, a newline to stderr, the rest to stdout leaks nowhere', async () => {
    const home = mkdtempSync(join(tmpdir(), 'svc-live-home-'));
    const env = envFor(home);
    const head = 'ghp_' + 'A'.repeat(8);
    const tail = 'B'.repeat(24);
    const agent = join(home, 'split.sh');
    writeFileSync(
      agent,
      `#!/bin/sh
printf '${head}'
sleep 0.3
printf 'x\\n' >&2
sleep 0.3
printf '${tail}\\n'
`,
    );
    const key = card('split token card');
    const r = await svcInProcess(
      ['run', key, '--agent-cmd', `sh ${agent}`, '--agent-env', 'TRUST_PIDS', '--send-logs', '--allow-empty', '--repo', await makeRepo()],
      { env },
    );
    expect(r.code, r.stderr).toBe(0);
    const runId = readdirSync(join(home, 'state', 'runs'))[0]!;
    const log = readFileSync(join(home, 'state', 'runs', runId, 'logs', `${key}.log`), 'utf8');
    const sent = (db.prepare('SELECT body FROM dispatch_events WHERE run_id = ? AND body IS NOT NULL').all(runId) as { body: string }[])
      .map((e) => e.body)
      .join('');
    for (const text of [log, sent, r.stdout, r.stderr]) {
      expect(text).not.toContain('AAAA');
      expect(text).not.toContain('BBBB');
    }
    expect(log).toContain('[REDACTED]');
    expect(sent).toContain('[REDACTED]');
  }, 30_000);
});

describe('signals outside dispatch', () => {
  let silent: Server;
  let silentUrl: string;
  const sockets: import('node:net').Socket[] = [];
  beforeAll(async () => {
    // Accepts connections and never answers: a command waits on it until interrupted.
    silent = createServer((s) => sockets.push(s));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
    silentUrl = `http://127.0.0.1:${(silent.address() as { port: number }).port}`;
  });
  afterAll(() => {
    for (const s of sockets) s.destroy();
    silent.close();
  });

  /**
   * Whether the process has settled into waiting (its CPU time stopped growing): only then are its
   * handlers in place (Node's own start-up handler would re-raise the signal and die by it).
   */
  function idle(pid: number, last: { ticks: number }): boolean {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    const settled = ticks > 0 && ticks === last.ticks;
    last.ticks = ticks;
    return settled;
  }

  async function interrupt(child: ChildProcess, signal: NodeJS.Signals, ready: () => boolean, everyMs = 25): Promise<void> {
    await waitFor('the command to be waiting', ready, 15_000, everyMs);
    child.kill(signal);
  }

  test.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)(
    'items list and auth login: %s exits %i at once, without the dispatch message',
    async (signal, code) => {
      const env = isolatedEnv({ SVC_BASE_URL: silentUrl, SVC_TOKEN: 'svc_pat_not_checked_here', SVC_PROJECT: 'DEMO' });
      const seen = sockets.length;
      const list = spawnSvc(env, ['items', 'list'], 'pipe');
      await interrupt(list.child, signal, () => sockets.length > seen);
      expect((await list.done).code).toBe(code);
      expect(list.out().stderr).not.toContain('stopping agents');
      // auth login waits for the token on standard input, which stays open.
      const login = spawnSvc(isolatedEnv({ SVC_BASE_URL: silentUrl }), ['auth', 'login', '--with-token'], 'pipe');
      const last = { ticks: -1 };
      await interrupt(login.child, signal, () => idle(login.child.pid!, last), 300);
      expect((await login.done).code).toBe(code);
      expect(login.out().stderr).not.toContain('stopping agents');
    },
    30_000,
  );

  test.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)(
    'svc server stops on the first %s (exit %i), without the dispatch message',
    async (signal, code) => {
      const srv = spawnSvc(isolatedEnv(), ['server', '--port', '0'], 'pipe');
      await interrupt(srv.child, signal, () => srv.out().stdout.includes('http://'));
      expect((await srv.done).code).toBe(code);
      expect(srv.out().stderr).not.toContain('stopping agents');
    },
    30_000,
  );
});

describe('svc server --seed demo on an existing database', () => {
  test('a second start is a no-op on the data and still prints the URL and a working token', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-seed-'));
    const file = join(dir, 'svc.db');
    const start = async () => {
      const srv = spawnSvc(isolatedEnv(), ['server', '--port', '0', '--db', file, '--seed', 'demo'], 'pipe');
      const lines = await waitFor(
        'URL and token',
        () => {
          const l = srv.out().stdout.split('\n').filter(Boolean);
          return l.length >= 2 ? l : null;
        },
        15_000,
      );
      return { srv, url: lines[0]!, token: lines[1]! };
    };
    const first = await start();
    first.srv.child.kill('SIGTERM');
    await first.srv.done;
    const count = () => {
      const d = openDatabase(file, MODULES);
      try {
        return (d.prepare('SELECT count(*) AS n FROM work_items').get() as { n: number }).n;
      } finally {
        d.close();
      }
    };
    const items = count();
    const second = await start();
    try {
      expect(second.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(second.token).toMatch(/^svc_pat_/);
      expect(second.srv.out().stderr).not.toContain('UNIQUE');
      for (const token of [first.token, second.token]) {
        const r = await svcInProcess(['items', 'list', '--json'], { env: isolatedEnv({ SVC_BASE_URL: second.url, SVC_TOKEN: token, SVC_PROJECT: 'DEMO' }) });
        expect(r.code, r.stderr).toBe(0);
      }
    } finally {
      second.srv.child.kill('SIGTERM');
      await second.srv.done;
    }
    expect(count()).toBe(items);
  }, 30_000);
});
