// `svc logs` shows an agent's JSON stream as readable lines, `--raw` as recorded: runs whose agent
// replays a log the real CLI wrote (test/fixtures/agents/recorded, test/dispatch/agent/
// stream-render.test.ts) through `svc run --agent-format`, as root through svc's default agent pool.
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, isolatedEnv, makeRepo, runCli, type CliEnv } from '../../support/cli.js';
import { svcInProcess } from '../../support/svc-in-process.js';
import { startTestService, type TestService } from '../../support/service.js';

const RECORDED = resolve(import.meta.dirname, '../../fixtures/agents/recorded');
const AGENTS = ['claude', 'codex', 'gemini', 'opencode'] as const;

let svc: TestService;
let env: CliEnv;
let repo: string;
/** Open to the pool's users (0755): what their agents read, and the gate they wait on. */
let open: string;
beforeAll(async () => {
  open = mkdtempSync(join(tmpdir(), 'svc-logs-open-'));
  chmodSync(open, 0o755);
  svc = await startTestService();
  repo = await makeRepo();
  // svc's default as root: each agent runs as a user of its pool, in a clone of its own. Its network
  // is left open: the fence needs nftables, which `npm test` does not (test/support/system-tests.ts).
  env = isolatedEnv({ SVC_BASE_URL: svc.url, SVC_TOKEN: svc.token, SVC_PROJECT: svc.projectKey, SVC_AGENT_USER: undefined, SVC_NETWORK: 'open' });
});
afterAll(async () => {
  await svc.close();
});

const item = (title: string) => svc.admin.createWorkItem({ projectKey: svc.projectKey, kind: 'task', title, type: 'research' }).key;
const cli = (args: string[]) => svcInProcess(args, { env, cwd: repo });
const recorded = (name: string) => readFileSync(join(RECORDED, `${name}.log`), 'utf8');
const readable = (name: string) => readFileSync(join(RECORDED, `${name}.txt`), 'utf8');

/** A run of one card whose agent prints `file` (readable by the pool's users) as `format`'s stream. */
async function replay(format: string, file: string): Promise<{ runId: string; key: string }> {
  const key = item(`replay ${format}`);
  const r = await cli(['run', key, '--agent-cmd', `cat ${file}`, '--agent-format', format, '--allow-empty', '--heartbeat-interval', '5s']);
  expect(r.code, r.stderr).toBe(0);
  return { runId: /run (\S+) · run · completed/.exec(r.stderr)![1]!, key };
}

describe('svc logs of a run whose agent streams JSON', () => {
  const runs = new Map<string, { runId: string; key: string }>();
  beforeAll(async () => {
    for (const agent of AGENTS) runs.set(agent, await replay(agent, join(RECORDED, `${agent}-success.log`)));
  }, 120_000);

  it.each(AGENTS)('%s: readable lines by default, the bytes as recorded with --raw', async (agent) => {
    const { runId, key } = runs.get(agent)!;
    const shown = await cli(['logs', runId, key]);
    expect([shown.code, shown.stderr]).toEqual([0, '']);
    expect(shown.stdout).toBe(readable(`${agent}-success`));
    expect((await cli(['logs', runId, key, '--raw'])).stdout).toBe(recorded(`${agent}-success`));
    // With the run's headers too: the readable text sits under its leg's line.
    expect((await cli(['logs', runId])).stdout).toBe(`── ${key} ──\n${readable(`${agent}-success`)}`);
  });

  it('--json holds the readable text, and with --raw the log as recorded', async () => {
    const { runId, key } = runs.get('claude')!;
    const doc = JSON.parse((await cli(['logs', runId, '--json'])).stdout) as { legs: { key: string; log: string }[] };
    expect(doc.legs).toEqual([{ key, log: readable('claude-success') }]);
    const raw = JSON.parse((await cli(['logs', runId, '--json', '--raw'])).stdout) as { legs: { key: string; log: string }[] };
    expect(raw.legs).toEqual([{ key, log: recorded('claude-success') }]);
  });

  it('on a terminal a control character an event carries JSON-escaped is shown, not obeyed (it is one once decoded)', async () => {
    const hostile = join(open, 'hostile-claude.log');
    const said = {
      type: 'assistant',
      message: { role: 'assistant', content: [{ type: 'text', text: 'hi \u001b]0;gotcha\u0007 \u001b]52;c;ZXZpbA==\u0007 there' }] },
    };
    writeFileSync(hostile, `${JSON.stringify(said)}\n`, { mode: 0o644 });
    expect(readFileSync(hostile, 'utf8')).not.toMatch(/[\u0000-\u0008\u000b-\u001f]/);
    const { runId, key } = await replay('claude', hostile);
    const onTty = await svcInProcess(['logs', runId, key], { env, cwd: repo, tty: true });
    expect(onTty.stdout).toBe('hi \\e]0;gotcha\\x07 \\e]52;c;ZXZpbA==\\x07 there\n');
  });

  it('into a reader that goes away (| head -1): the first readable line, exit 0, nothing on stderr', async () => {
    // A long stream, so svc is still writing when head leaves.
    const event = recorded('claude-success').split('\n')[1]!;
    const long = join(open, 'long-claude.log');
    writeFileSync(long, `${recorded('claude-success').split('\n')[0]}\n${`${event}\n`.repeat(4000)}`, { mode: 0o644 });
    const { runId } = await replay('claude', long);
    const piped = await new Promise<{ out: string; code: string; err: string }>((done) => {
      const child = spawn('bash', ['-c', `"${process.execPath}" "${BIN}" logs ${runId} --no-headers | head -1; echo "\${PIPESTATUS[0]}" >&2`], {
        env,
        cwd: repo,
      });
      let out = '';
      let err = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (err += d));
      child.on('close', () => done({ out, code: err.trim().split('\n').pop()!, err: err.trim().split('\n').slice(0, -1).join('\n') }));
    });
    expect(piped).toEqual({ out: `${readable('claude-success').split('\n')[0]}\n`, code: '0', err: '' });
  });
});

describe('svc logs of a live run', () => {
  it('a line the agent is still writing: shown as it is without --follow, held by --follow until it ends; exit 0', async () => {
    const key = item('live stream');
    const [init, ...rest] = recorded('claude-success').split('\n');
    // Longer than the 4 KiB an unfinished line is held back for redaction: half of it reaches the log.
    const said = `${'word '.repeat(2000)}end`;
    const long = JSON.stringify({ type: 'assistant', message: { role: 'assistant', content: [{ type: 'text', text: said }] } });
    const gate = join(open, `gate-${key}`);
    const parts = join(open, `parts-${key}`);
    writeFileSync(`${parts}.1`, `${init}\n${long.slice(0, 6000)}`, { mode: 0o644 });
    writeFileSync(`${parts}.2`, `${long.slice(6000)}\n${rest.join('\n')}`, { mode: 0o644 });
    const agent = `sh -c 'cat ${parts}.1; while [ ! -e ${gate} ]; do sleep 0.05; done; cat ${parts}.2'`;
    const running = cli(['run', key, '--agent-cmd', agent, '--agent-format', 'claude', '--allow-empty', '--heartbeat-interval', '5s']);
    const runsDir = join(env.SVC_STATE_DIR!, 'runs');
    const log = (id: string) => join(runsDir, id, 'logs', `${key}.log`);
    let runId = '';
    for (let i = 0; i < 600 && !(runId && readFileSync(log(runId), 'utf8').length > init!.length + 1000); i++) {
      await new Promise((r) => setTimeout(r, 25));
      runId ||= (existsSync(runsDir) ? readdirSync(runsDir) : []).find((d) => existsSync(log(d))) ?? '';
    }
    // Settled: the agent waits on the gate, and svc wrote what it will of the cut line.
    for (let size = -1; size !== readFileSync(log(runId)).length; ) {
      size = readFileSync(log(runId)).length;
      await new Promise((r) => setTimeout(r, 200));
    }
    const cut = readFileSync(log(runId), 'utf8').slice(init!.length + 1);
    expect(long.startsWith(cut) && cut.length < long.length, 'the log holds a cut line').toBe(true);
    const [started, ...after] = readable('claude-success').split('\n');
    const now = await runCli(['logs', runId, key], { env, cwd: repo });
    expect([now.code, now.stderr, now.stdout]).toEqual([0, '', `${started}\n${cut}`]);
    const follow = runCli(['logs', runId, key, '--follow'], { env, cwd: repo });
    await new Promise((r) => setTimeout(r, 600));
    writeFileSync(gate, '');
    expect((await running).code).toBe(0);
    const followed = await follow;
    expect([followed.code, followed.stderr, followed.stdout]).toEqual([0, '', [started, said, ...after].join('\n')]);
  });
});
