// An agent prints OSC 0 (window title), OSC 52 (clipboard), OSC 8 (a link) and
// CSI 2J (clear screen), and the card's title carries ESC, BEL and CR. On a real terminal `svc logs
// RUN KEY` shows them and obeys none; into a pipe it keeps the log's bytes. The markdown and HTML
// reports (titles, reasons, log excerpts) hold no raw ESC, BEL or CR either.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isolatedEnv, makeRepo, type CliEnv } from '../support/cli.js';
import { startLocalServer, type LocalServer } from '../support/server-process.js';
import { svcInProcess } from '../support/svc-in-process.js';
import { openTerminal, type Terminal } from './terminal.js';

const TITLE = 'Pay \u001b]0;owned-title\u0007now\rfake \u001b[2Jcleared';
const AGENT = [
  '#!/bin/sh',
  "printf 'title \\033]0;agent-title\\007 clip \\033]52;c;cm0gLXJmIC8=\\007 link \\033]8;;https://evil.invalid\\033\\\\here\\033]8;;\\033\\\\ clear \\033[2J end\\n'",
  "printf 'bell \\007 back\\rover\\n'",
  'exit 3',
].join('\n');
/** ESC, BEL and a carriage return that does not end a line (a terminal writes \r\n for \n). */
const RAW = /\u001b|\u0007|\r(?!\n)/;

let server: LocalServer;
let env: CliEnv;
let terminal: Terminal | undefined;
let runId: string;
let key: string;

beforeAll(async () => {
  server = await startLocalServer();
  env = isolatedEnv({ SVC_BASE_URL: server.url, SVC_TOKEN: server.token, SVC_PROJECT: 'DEMO' });
  const made = await svcInProcess(['items', 'create', '--kind', 'task', '--title', TITLE, '--json'], { env });
  expect(made.code, made.stderr).toBe(0);
  key = (JSON.parse(made.stdout) as { key: string }).key;
  const agent = join(mkdtempSync(join(tmpdir(), 'svc-hostile-')), 'agent.sh');
  writeFileSync(agent, AGENT, { mode: 0o755 });
  const ran = await svcInProcess(['run', key, '--agent-cmd', `sh ${agent}`, '--repo', await makeRepo(), '--json'], { env });
  expect(ran.code, ran.stderr).toBe(1);
  runId = (JSON.parse(ran.stdout) as { runId: string }).runId;
}, 60_000);

afterAll(async () => {
  await terminal?.close();
  await server?.stop();
});

describe('what an agent or a title says reaches a terminal and a report made visible', () => {
  it('svc logs RUN KEY on a real terminal shows the escapes and obeys none', async () => {
    terminal = await openTerminal(['logs', runId, key], { env, cwd: process.cwd() });
    expect(await terminal.exited()).toBe(0);
    const raw = terminal.raw();
    expect(raw).toContain('title \\e]0;agent-title\\x07 clip \\e]52;c;');
    expect(raw).toContain('\\e]8;;https://evil.invalid');
    expect(raw).toContain('clear \\e[2J end');
    expect(raw).toContain('bell \\x07 back\\rover');
    expect(RAW.test(raw)).toBe(false);
    // The terminal itself, fed those bytes: no title, link, clipboard or clear obeyed; the text shown.
    expect(terminal.obeyed()).toEqual([]);
    expect(await terminal.screen()).toContain('title \\e]0;agent-title\\x07 clip \\e]52;c;');
  });

  it('svc logs into a pipe keeps the bytes', async () => {
    const piped = await svcInProcess(['logs', runId, key], { env });
    expect(piped.stdout).toContain('\u001b]0;agent-title\u0007');
    expect(piped.stdout).toContain('\u001b[2J');
  });

  it.each([['markdown'], ['html']])('the %s report holds no raw ESC, BEL or CR', async (format) => {
    const out = join(mkdtempSync(join(tmpdir(), 'svc-hostile-report-')), `report.${format}`);
    const r = await svcInProcess(['runs', 'report', runId, '--format', format, '--output', out], { env });
    expect(r.code, r.stderr).toBe(0);
    const text = readFileSync(out, 'utf8');
    // The title is there, shown; the log's tail without its terminal sequences.
    expect(text).toMatch(/Pay \\{1,2}e\]0;owned-title\\{1,2}x07now/);
    expect(text).toContain('link here clear');
    expect(RAW.test(text)).toBe(false);
  });
});
