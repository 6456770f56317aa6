// The dispatch progress view as a person sees it: `svc run KEY` on a real terminal (a pseudo-terminal
// read through a terminal emulator: ./terminal.ts) against a `svc server` (run in the test's
// process), with a fake agent that works for about two seconds and commits. Then the same command
// piped, and the colour switches (NO_COLOR, FORCE_COLOR, --no-color, CI).
// Only what needs a terminal runs `bin/svc.js` on one; what a pipe sees (a stream that is no TTY)
// runs the command tree in-process (test/support/program.ts) against the same server, with the same
// environment, so a check costs no node start-up.
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { DispatchRun } from '../../src/contract/types.js';
import { createAdmin } from '../../src/server/admin.js';
import { openDatabase, type Database } from '../../src/server/db.js';
import { MODULES } from '../../src/server/modules.js';
import { isolatedEnv, makeRepo, runCli, type CliEnv } from '../support/cli.js';
import { runProgram } from '../support/program.js';
import { startLocalServer, type LocalServer } from '../support/server-process.js';
import { openTerminal, type Terminal } from './terminal.js';

const AGENT = `${process.execPath} ${resolve(import.meta.dirname, '../fixtures/agents/slow-commit.mjs')}`;
/**
 * An agent that only commits, where how long a leg takes is not what a test looks at (colour
 * switches, the --json document, a table). Where a spinner must NOT show, the slow one stays: a leg
 * that ended before ora had loaded would never have drawn one anyway.
 */
const QUICK_AGENT =
  'sh -c "echo done > $SVC_CARD_KEY.txt && git add -A && git -c user.name=a -c user.email=a@example.invalid commit -qm \\"$SVC_CARD_KEY: done\\""';
const SPINNER = /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/;
const SGR = /\x1b\[[\d;]*m/;
const ESC = /\x1b/;

let server: LocalServer;
let db: Database;
const terminals: Terminal[] = [];
const printed: string[] = [];

/** The environment of a user at a terminal: no NO_COLOR, no CI (isolatedEnv sets NO_COLOR for the other tests). */
function userEnv(extra: CliEnv = {}): CliEnv {
  return isolatedEnv({ SVC_BASE_URL: server.url, SVC_TOKEN: server.token, SVC_PROJECT: 'DEMO', NO_COLOR: undefined, FORCE_COLOR: undefined, ...extra });
}

/**
 * A fresh task for each run, so every test runs a card nobody ran before: written through the
 * service's own admin functions into the server's database (`items create` is tested in test/cli).
 */
function freshTask(title: string): string {
  return createAdmin(db).createWorkItem({ projectKey: 'DEMO', kind: 'task', title }).key;
}

/** `svc ARGS` with stdout and stderr that are no terminal (a pipe), in-process. */
async function piped(args: string[], env: CliEnv = userEnv()) {
  const r = await runProgram(args, { env });
  printed.push(r.stdout, r.stderr);
  return r;
}

async function onTerminal(args: string[], env: CliEnv): Promise<Terminal> {
  const t = await openTerminal(args, { env, cwd: await makeRepo() });
  terminals.push(t);
  return t;
}

beforeAll(async () => {
  server = await startLocalServer();
  // A second connection to the server's file (WAL, busy timeout), for fixtures.
  db = openDatabase(server.db, MODULES);
});

afterAll(async () => {
  await Promise.all(terminals.map((t) => t.close()));
  db?.close();
  const violations = await server?.stop();
  expect(violations, 'responses that break the contract document').toEqual([]);
  for (const text of printed) expect(text).not.toContain(server.token);
});

describe('on a real terminal', () => {
  test('a spinner with the key and elapsed time, then the persisted ✔ line, then the summary table', async () => {
    const key = freshTask('Progress on a terminal');
    const t = await onTerminal(['run', key, '--agent-cmd', AGENT, '--heartbeat-interval', '1s'], userEnv());

    // While the agent works: one spinner line naming the card and its elapsed time, which grows.
    const spinnerLine = (screen: string) => screen.split('\n').find((l) => SPINNER.test(l[0] ?? '') && l.includes(key));
    const first = spinnerLine(await t.waitFor((s) => Boolean(spinnerLine(s))))!;
    expect(first).toMatch(new RegExp(`^${SPINNER.source} ${key} Progress on a terminal (\\d+\\.\\d)s$`));
    const later = spinnerLine(await t.waitFor((s) => /\s(1|2)\.\ds$/.test(spinnerLine(s) ?? '')))!;
    expect(Number(later.match(/(\d+\.\d)s$/)![1])).toBeGreaterThanOrEqual(1);

    expect(await t.exited()).toBe(0);
    const screen = await t.screen();
    printed.push(screen, t.raw());
    const lines = screen.split('\n');

    // The leg's line stays on screen with its disposition; the spinner is gone.
    const done = lines.findIndex((l) => new RegExp(`^✔ ${key} Progress on a terminal \\d+\\.\\ds implemented$`).test(l));
    expect(done, screen).toBeGreaterThanOrEqual(0);
    expect(lines.some((l) => SPINNER.test(l))).toBe(false);

    // Then the summary: the run, its stop reason and status, and a table of the legs.
    const head = lines.findIndex((l) => /^run run_\w+ · run · completed · succeeded$/.test(l));
    expect(head, screen).toBeGreaterThan(done);
    expect(lines[head + 1]).toMatch(/^CARD\s+DISPOSITION\s+TIME\s+EXIT\s+COST\s+NOTE$/);
    expect(lines[head + 2]).toMatch(new RegExp(`^${key}\\s+implemented\\s+\\d+\\.\\ds\\s+0$`));

    // The run id printed is the run on the service.
    const runId = lines[head]!.match(/^run (run_\w+)/)![1]!;
    const record = JSON.parse((await piped(['runs', 'show', runId, '--json'])).stdout) as DispatchRun;
    expect(record).toMatchObject({ status: 'succeeded', stopReason: 'completed' });
    expect(record.cards).toEqual([expect.objectContaining({ workItemKey: key, disposition: 'implemented' })]);

    // What went over the wire to the terminal: animated frames, a hidden cursor, colour.
    const raw = t.raw();
    expect(raw).toMatch(SPINNER);
    expect(raw).toContain('\x1b[?25l');
    expect(raw).toMatch(SGR);
  });

  // Three runs of two seconds each, mostly the agent sleeping: side by side.
  test.concurrent.each([
    ['NO_COLOR=1', { NO_COLOR: '1' }, [], false],
    ['--no-color', {}, ['--no-color'], false],
    // CI stops the animation only: a CI log viewer that is a terminal may still show colour.
    ['CI=true', { CI: 'true' }, [], true],
  ])('%s on a terminal: plain timestamped lines, no spinner', async (_name, extra, flags, colour) => {
    const key = freshTask('Progress without colour');
    const t = await onTerminal(['run', key, '--agent-cmd', AGENT, ...flags], userEnv(extra));
    expect(await t.exited()).toBe(0);
    const raw = t.raw();
    printed.push(raw);
    if (!colour) expect(raw).not.toMatch(SGR);
    expect(raw).not.toMatch(SPINNER);
    const screen = await t.screen();
    expect(screen).toMatch(new RegExp(`^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ ${key} implemented in \\d+\\.\\ds \\(exit 0\\)$`, 'm'));
    expect(screen).toMatch(/^run run_\w+ · run · completed · succeeded$/m);
  });

  test('a read command on a terminal draws a table sized to it; piped, tab-separated rows', async () => {
    const narrow = await openTerminal(['items', 'list'], { env: userEnv(), cwd: process.cwd(), width: 50 });
    terminals.push(narrow);
    expect(await narrow.exited()).toBe(0);
    const lines = (await narrow.screen()).split('\n');
    expect(lines[0]).toMatch(/^KEY\s+KIND\s+STATUS\s+PRIORITY\s+TITLE$/);
    expect(lines.find((l) => l.startsWith('DEMO-1 '))).toMatch(/^DEMO-1\s+epic\s+todo\s+high\s+Check/);
    // Every row fits the 50 columns: long titles are cut with an ellipsis instead of wrapping.
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(50);
    expect(lines.some((l) => l.endsWith('…'))).toBe(true);

    const list = await piped(['items', 'list']);
    expect(list.stdout.split('\n')[0]).toBe('DEMO-1\tepic\ttodo\thigh\tCheckout revamp');
    expect(list.stdout).not.toMatch(ESC);
  });
});

describe('tables on a real terminal', () => {
  test('runs show: the run, then an aligned table with a header; piped, plain rows', async () => {
    const key = freshTask('A run to show');
    const done = await piped(['run', key, '--agent-cmd', QUICK_AGENT, '--repo', await makeRepo(), '--json']);
    expect(done.code, done.stderr).toBe(0);
    const { runId } = JSON.parse(done.stdout) as { runId: string };

    const t = await onTerminal(['runs', 'show', runId], userEnv());
    expect(await t.exited()).toBe(0);
    const lines = (await t.screen()).split('\n');
    expect(lines[0]).toBe(`run ${runId} · run · succeeded (completed)`);
    expect(lines[2]).toMatch(/^CARD\s+DISPOSITION\s+EXIT\s+BRANCH\s+SKIP REASON$/);
    expect(lines[3]).toMatch(new RegExp(`^${key}\\s+implemented\\s+0\\s+svc/${key}$`));
    // The columns line up under their headings.
    expect(lines[3]!.indexOf('implemented')).toBe(lines[2]!.indexOf('DISPOSITION'));
    expect(lines[3]!.indexOf(`svc/${key}`)).toBe(lines[2]!.indexOf('BRANCH'));

    const shown = await piped(['runs', 'show', runId]);
    expect(shown.stdout.split('\n')[2]).toBe(`${key}\timplemented\t0\tsvc/${key}\t`);
  });
});

describe('piped', () => {
  test('plain timestamped lines on stderr, no escapes, no spinner frames; stdout carries nothing', async () => {
    const key = freshTask('Progress in a pipe');
    // Through a real pipe (bin/svc.js spawned): nothing reaches stdout, not even by a way around
    // the context's streams.
    const r = await runCli(['run', key, '--agent-cmd', AGENT, '--repo', await makeRepo()], { env: userEnv() });
    printed.push(r.stdout, r.stderr);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(ESC);
    expect(r.stderr).not.toMatch(SPINNER);
    expect(r.stdout).toBe('');
    const lines = r.stderr.split('\n');
    const blank = lines.indexOf('');
    // Progress: every line stamped; then a blank line and the summary table.
    for (const l of lines.slice(0, blank)) expect(l).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \S/);
    expect(lines.slice(0, blank)).toEqual([
      expect.stringMatching(/ run run_\w+ opened \(run .+\): 1 of 1 named card/),
      expect.stringMatching(new RegExp(` ${key} started \\(1/1\\) on svc/${key}: Progress in a pipe$`)),
      // The leg's network, said once as the first agent starts (docs/trust.md, "The network of a leg").
      expect.stringMatching(/ network: \w+/),
      // As root (CI), the tests' SVC_AGENT_USER=none keeps the agent as root, and svc says so once.
      ...(process.getuid?.() === 0 ? [expect.stringMatching(/ warning: SVC_AGENT_USER none: agents run as root/)] : []),
      expect.stringMatching(new RegExp(` ${key} implemented in \\d+\\.\\ds \\(exit 0\\)$`)),
    ]);
    expect(lines[blank + 1]).toMatch(/^run run_\w+ · run · completed · succeeded$/);
    expect(lines[blank + 2]).toMatch(/^CARD\s+DISPOSITION\s+TIME\s+EXIT\s+COST\s+NOTE$/);
    expect(lines[blank + 3]).toMatch(new RegExp(`^${key}\\s+implemented\\s+\\d+\\.\\ds\\s+0$`));
  });

  test('FORCE_COLOR=1 piped: colour, still no spinner', async () => {
    const key = freshTask('Forced colour');
    const r = await piped(['run', key, '--agent-cmd', AGENT, '--repo', await makeRepo()], userEnv({ FORCE_COLOR: '1' }));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(SGR);
    expect(r.stderr).not.toMatch(SPINNER);
  });

  test('--no-color wins over FORCE_COLOR=1', async () => {
    const key = freshTask('No colour');
    const r = await piped(['run', key, '--agent-cmd', QUICK_AGENT, '--repo', await makeRepo(), '--no-color'], userEnv({ FORCE_COLOR: '1' }));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(ESC);
  });

  test('--json: the summary is the one document on stdout; stderr stays plain', async () => {
    const key = freshTask('Progress with --json');
    const r = await piped(['run', key, '--agent-cmd', QUICK_AGENT, '--repo', await makeRepo(), '--json'], userEnv({ FORCE_COLOR: '1' }));
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      stopReason: 'completed',
      status: 'succeeded',
      legs: [expect.objectContaining({ key, disposition: 'implemented' })],
    });
    expect(r.stderr).not.toMatch(ESC);
  });
});
