// Titles, reasons and logs come from the service or an agent (docs/agents.md): their
// control characters are shown, never obeyed, by `items list`, `run --dry-run`, the progress lines
// and `svc logs` on a terminal, on a terminal and into a pipe alike. `--json` keeps the title as it
// is (JSON escapes it), and a piped `svc logs` keeps the agent's bytes.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { visible, visibleKeepingStyle } from '../../src/ui/visible.js';
import { isolatedEnv, makeRepo, type CliEnv } from '../support/cli.js';
import { startLocalServer, type LocalServer } from '../support/server-process.js';
import { svcInProcess } from '../support/svc-in-process.js';

// OSC 0 (window title), OSC 52 (clipboard), a line erase with a carriage return, C1 CSI, BEL.
const HOSTILE = 'Pay \u001b]0;owned\u0007 now\u001b]52;c;cm0gLXJmIC8=\u0007 \u001b[2K\rfake line \u009b31m red';
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

let server: LocalServer;
let env: CliEnv;
let key: string;

beforeAll(async () => {
  server = await startLocalServer();
  env = isolatedEnv({ SVC_BASE_URL: server.url, SVC_TOKEN: server.token, SVC_PROJECT: 'DEMO' });
  const made = await svcInProcess(['items', 'create', '--kind', 'task', '--title', HOSTILE, '--json'], { env });
  expect(made.code, made.stderr).toBe(0);
  key = (JSON.parse(made.stdout) as { key: string }).key;
});
afterAll(async () => {
  await server?.stop();
});

describe('control characters from the service or an agent are shown, not obeyed', () => {
  it('visible() keeps newline and tab and shows every other control character', () => {
    expect(visible('a\tb\nc')).toBe('a\tb\nc');
    expect(visible('\u001b]0;t\u0007\r\u0000\u007f\u009b')).toBe('\\e]0;t\\x07\\r\\x00\\x7f\\x9b');
    // svc's own colour stays where colour is on; the same bytes from outside do not when it is off.
    expect(visibleKeepingStyle('\u001b[1mKEY\u001b[22m \u001b]0;x\u0007', true)).toBe('\u001b[1mKEY\u001b[22m \\e]0;x\\x07');
    expect(visibleKeepingStyle('\u001b[1mKEY\u001b[22m', false)).toBe('\\e[1mKEY\\e[22m');
  });

  it.each([[true], [false]])('items list (terminal: %s)', async (tty) => {
    const r = await svcInProcess(['items', 'list'], { env, tty });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(key);
    expect(r.stdout).toContain('\\e]0;owned\\x07');
    expect(RAW.test(r.stdout.replace(/\n|\t/g, '').replace(/\u001b\[[0-9;]*m/g, ''))).toBe(false);
  });

  it('items list --json keeps the title as stored (JSON escapes it)', async () => {
    const r = await svcInProcess(['items', 'list', '--json'], { env });
    expect(r.stdout).toContain('\\u001b]0;owned\\u0007');
    expect(RAW.test(r.stdout.replace(/\n/g, ''))).toBe(false);
    // The same value to a parser: nothing was lost on the way.
    expect(JSON.stringify(JSON.parse(r.stdout))).toContain(JSON.stringify(HOSTILE));
  });

  it('run --dry-run, the progress lines, and svc logs on a terminal (not in a pipe)', async () => {
    const repo = await makeRepo();
    const dry = await svcInProcess(['run', key, '--dry-run', '--agent-cmd', 'true', '--repo', repo], { env });
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout + dry.stderr).toContain('\\e]52;c;');
    expect(RAW.test((dry.stdout + dry.stderr).replace(/\n|\t/g, ''))).toBe(false);

    const agent = join(mkdtempSync(join(tmpdir(), 'svc-ctl-')), 'agent.sh');
    writeFileSync(agent, `printf 'agent says \\033]0;gotcha\\007 hi\\n'; exit 3\n`, { mode: 0o755 });
    const ran = await svcInProcess(['run', key, '--agent-cmd', `sh ${agent}`, '--repo', repo, '--json'], { env });
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain(`${key} started`);
    expect(ran.stderr).toContain('\\e[2K\\rfake line');
    expect(RAW.test(ran.stderr.replace(/\n|\t/g, ''))).toBe(false);
    const runId = (JSON.parse(ran.stdout) as { runId: string }).runId;
    const onTty = await svcInProcess(['logs', runId, key], { env, tty: true });
    expect(onTty.stdout).toContain('agent says \\e]0;gotcha\\x07 hi');
    const piped = await svcInProcess(['logs', runId, key], { env });
    expect(piped.stdout).toContain('agent says \u001b]0;gotcha\u0007 hi');
  });
});
