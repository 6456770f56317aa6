// runAgentProcess against real processes: the fake agents in test/fixtures/agents.
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { agentEnv } from '../../../src/dispatch/agent/env.js';
import { runAgentProcess } from '../../../src/dispatch/agent/run-process.js';
import { createStreamParser } from '../../../src/dispatch/agent/streams/index.js';
import type { LegSpec } from '../../../src/dispatch/agent/types.js';

const AGENTS = resolve(import.meta.dirname, '../../fixtures/agents');
const STREAMS = join(AGENTS, 'streams');
const node = process.execPath;

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-leg-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function spec(over: Partial<LegSpec> & Pick<LegSpec, 'argv'>): LegSpec {
  return {
    cwd: dir,
    env: agentEnv(
      { env: process.env },
      {
        SVC_CARD_KEY: 'SVC-1',
        SVC_RUN_ID: 'run-1',
        SVC_PROMPT_FILE: join(dir, 'state', 'prompt.md'),
        SVC_WORKDIR: dir,
        SVC_BRANCH: 'svc/SVC-1',
      },
    ),
    prompt: '# SVC-1: do the thing\n',
    promptVia: 'stdin',
    promptFile: join(dir, 'state', 'prompt.md'),
    idleTimeoutMs: 10_000,
    cardTimeoutMs: 20_000,
    killGraceMs: 500,
    onOutput: () => {},
    ...over,
  };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitFor(predicate: () => boolean, ms = 3_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (predicate()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return predicate();
}

describe('runAgentProcess', () => {
  it('delivers the prompt on stdin, writes the prompt file, and succeeds on exit 0', async () => {
    let out = '';
    const result = await runAgentProcess(
      spec({
        argv: [node, join(AGENTS, 'print-env.mjs'), 'a b', '$(echo no)'],
        onOutput: (chunk, stream) => {
          if (stream === 'stdout') out += chunk.toString();
        },
      }),
    );
    expect(result).toMatchObject({ exitCode: 0, signal: null, outcome: 'succeeded', reason: null });
    const seen = JSON.parse(out) as { stdin: string; argv: string[] };
    expect(seen.stdin).toBe('# SVC-1: do the thing\n');
    // Arguments arrive verbatim: no shell ever saw them.
    expect(seen.argv).toEqual(['a b', '$(echo no)']);
    expect(await readFile(join(dir, 'state', 'prompt.md'), 'utf8')).toBe('# SVC-1: do the thing\n');
  });

  it('closes stdin at once when the prompt goes by file', async () => {
    let out = '';
    const result = await runAgentProcess(
      spec({
        argv: [node, join(AGENTS, 'print-env.mjs')],
        promptVia: 'file',
        onOutput: (chunk) => (out += chunk.toString()),
      }),
    );
    expect(result.outcome).toBe('succeeded');
    expect((JSON.parse(out) as { stdin: string }).stdin).toBe('');
  });

  it('never hands SVC_TOKEN, SVC_RUN_TOKEN or git tokens to the agent', async () => {
    let out = '';
    const env = agentEnv(
      {
        env: { ...process.env, SVC_TOKEN: 'svc_pat_secret', SVC_RUN_TOKEN: 'svc_run_secret', GITHUB_TOKEN: 'ghs_x', GH_TOKEN: 'y', KEEP_ME: '1' },
        agentEnv: ['KEEP_ME', 'SVC_TOKEN'],
      },
      { SVC_CARD_KEY: 'SVC-9', SVC_RUN_ID: 'run-9', SVC_PROMPT_FILE: '/p', SVC_WORKDIR: dir, SVC_BRANCH: 'svc/SVC-9' },
    );
    await runAgentProcess(spec({ argv: [node, join(AGENTS, 'print-env.mjs')], env, onOutput: (c) => (out += c.toString()) }));
    const seen = (JSON.parse(out) as { env: Record<string, string> }).env;
    expect(seen).not.toHaveProperty('SVC_TOKEN');
    expect(seen).not.toHaveProperty('SVC_RUN_TOKEN');
    expect(seen).not.toHaveProperty('GITHUB_TOKEN');
    expect(seen).not.toHaveProperty('GH_TOKEN');
    expect(seen).toMatchObject({ KEEP_ME: '1', SVC_CARD_KEY: 'SVC-9', SVC_RUN_ID: 'run-9', SVC_BRANCH: 'svc/SVC-9', SVC_WORKDIR: dir });
  });

  it('sets PWD to the worktree, whatever PWD svc itself was started with', async () => {
    // opencode 1.18 took its project folder from an inherited PWD and committed outside the worktree.
    let out = '';
    const env = agentEnv(
      { env: { ...process.env, PWD: '/somewhere/else' } },
      { SVC_CARD_KEY: 'SVC-9', SVC_RUN_ID: 'r', SVC_PROMPT_FILE: '/p', SVC_WORKDIR: dir, SVC_BRANCH: 'b' },
    );
    await runAgentProcess(spec({ argv: [node, join(AGENTS, 'print-env.mjs')], env, onOutput: (c) => (out += c.toString()) }));
    expect((JSON.parse(out) as { env: Record<string, string> }).env.PWD).toBe(dir);
  });

  it('consumes a lot of output on both streams without blocking the agent', async () => {
    const sizes = { stdout: 0, stderr: 0 };
    const result = await runAgentProcess(spec({ argv: [node, join(AGENTS, 'chatty.mjs'), '8192'], onOutput: (c, s) => (sizes[s] += c.length) }));
    expect(result.outcome).toBe('succeeded');
    expect(sizes.stdout).toBe(8192 * 1024 + 4);
    expect(sizes.stderr).toBe(1024 * 1024);
  });

  it('fails with the exit code', async () => {
    const result = await runAgentProcess(spec({ argv: [node, '-e', 'process.exit(3)'] }));
    expect(result).toMatchObject({ exitCode: 3, outcome: 'failed', reason: 'exit 3' });
  });

  it('reports a missing executable as exit 127, not a crash', async () => {
    const result = await runAgentProcess(spec({ argv: ['svc-no-such-agent-xyz', '--flag'] }));
    expect(result).toMatchObject({ exitCode: 127, outcome: 'failed', reason: 'agent not found: svc-no-such-agent-xyz' });
  });

  it('kills the whole process group, grandchild included, on idle timeout', async () => {
    const pids = join(dir, 'pids.json');
    const result = await runAgentProcess(spec({ argv: [node, join(AGENTS, 'hang.mjs'), pids], idleTimeoutMs: 600 }));
    expect(result).toMatchObject({ outcome: 'failed', reason: 'idle timeout', exitCode: null, signal: 'SIGTERM' });
    const { child, grandchild } = JSON.parse(await readFile(pids, 'utf8')) as { child: number; grandchild: number };
    expect(await waitFor(() => !alive(child) && !alive(grandchild))).toBe(true);
  });

  it('sends SIGKILL after the grace period to an agent that ignores SIGTERM', async () => {
    const started = Date.now();
    const result = await runAgentProcess(spec({ argv: [node, join(AGENTS, 'ignore-term.mjs')], idleTimeoutMs: 10_000, cardTimeoutMs: 700, killGraceMs: 400 }));
    expect(result).toMatchObject({ outcome: 'failed', reason: 'card timeout', signal: 'SIGKILL' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
  });

  it('stops the agent with reason interrupted when the signal aborts', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const result = await runAgentProcess(spec({ argv: [node, join(AGENTS, 'hang.mjs'), join(dir, 'p.json')], signal: controller.signal }));
    expect(result).toMatchObject({ outcome: 'failed', reason: 'interrupted' });
  });

  it('does not start at all when already interrupted', async () => {
    const controller = new AbortController();
    controller.abort();
    const marker = join(dir, 'ran');
    const result = await runAgentProcess(spec({ argv: [node, '-e', `require('fs').writeFileSync(${JSON.stringify(marker)}, '')`], signal: controller.signal }));
    expect(result).toMatchObject({ outcome: 'failed', reason: 'interrupted', exitCode: null });
    expect(existsSync(marker)).toBe(false);
  });

  it('fails a leg whose stream reports a failed result even though it exits 0', async () => {
    const result = await runAgentProcess(
      spec({
        argv: [node, join(AGENTS, 'emit.mjs'), join(STREAMS, 'claude-error.jsonl'), '0'],
        parser: createStreamParser('claude-stream-json'),
      }),
    );
    expect(result).toMatchObject({ exitCode: 0, outcome: 'failed', tokensIn: 20_000, tokensOut: 3_000, costUsd: 0.42 });
    expect(result.reason).toMatch(/^agent reported error: error_max_turns/);
  });

  it('reports tokens and cost from a successful stream', async () => {
    const result = await runAgentProcess(
      spec({
        argv: [node, join(AGENTS, 'emit.mjs'), join(STREAMS, 'claude-success.jsonl')],
        parser: createStreamParser('claude-stream-json'),
      }),
    );
    expect(result).toMatchObject({ outcome: 'succeeded', reason: null, tokensIn: 37_120, tokensOut: 1_432, costUsd: 0.1834 });
  });

  it('lets the exit code decide when the stream has no terminal event', async () => {
    const empty = join(dir, 'empty.jsonl');
    await writeFile(empty, '{"type":"system","subtype":"init"}\n');
    const result = await runAgentProcess(spec({ argv: [node, join(AGENTS, 'emit.mjs'), empty, '2'], parser: createStreamParser('claude-stream-json') }));
    expect(result).toMatchObject({ outcome: 'failed', reason: 'exit 2' });
  });

  it('runs a fake agent that commits in a real repository', async () => {
    const gitEnv = { ...process.env, GIT_CONFIG_NOSYSTEM: '1' };
    execFileSync('git', ['init', '-q', '-b', 'main', dir], { env: gitEnv });
    execFileSync('git', ['-C', dir, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'root']);
    const result = await runAgentProcess(spec({ argv: [node, join(AGENTS, 'commit.mjs')] }));
    expect(result.outcome).toBe('succeeded');
    expect(execFileSync('git', ['-C', dir, 'log', '-1', '--format=%s'], { encoding: 'utf8' }).trim()).toBe('SVC-1: add SVC-1.txt');
  });
});

describe('runAgentProcess robustness', () => {
  it('survives an output callback that throws', async () => {
    const dir2 = await mkdtemp(join(tmpdir(), 'svc-leg-'));
    try {
      const result = await runAgentProcess({
        argv: [node, '-e', 'console.log("hi")'],
        cwd: dir2,
        env: { PATH: process.env.PATH ?? '' },
        prompt: 'p',
        promptVia: 'arg',
        promptFile: join(dir2, 'p.md'),
        idleTimeoutMs: 5_000,
        cardTimeoutMs: 5_000,
        killGraceMs: 100,
        onOutput: () => {
          throw new Error('ENOSPC');
        },
      });
      expect(result).toMatchObject({ outcome: 'succeeded', exitCode: 0 });
    } finally {
      await rm(dir2, { recursive: true, force: true });
    }
  });

  it('kills what the agent left running in its group once it exits', async () => {
    const dir2 = await mkdtemp(join(tmpdir(), 'svc-leg-'));
    const pidFile = join(dir2, 'bg.pid');
    try {
      // The agent starts a background process that keeps stdout open, then exits at once.
      const script = `const c = require('child_process').spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: ['ignore', 'inherit', 'inherit'] }); c.unref(); require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(c.pid));`;
      const started = Date.now();
      const result = await runAgentProcess({
        argv: [node, '-e', script],
        cwd: dir2,
        env: { PATH: process.env.PATH ?? '' },
        prompt: 'p',
        promptVia: 'stdin',
        promptFile: join(dir2, 'p.md'),
        idleTimeoutMs: 20_000,
        cardTimeoutMs: 20_000,
        killGraceMs: 100,
        onOutput: () => {},
      });
      expect(result).toMatchObject({ outcome: 'succeeded', exitCode: 0 });
      // Ended by the agent's exit, not by a timeout.
      expect(Date.now() - started).toBeLessThan(5_000);
      const bg = Number(await readFile(pidFile, 'utf8'));
      expect(await waitFor(() => !alive(bg))).toBe(true);
    } finally {
      await rm(dir2, { recursive: true, force: true });
    }
  });
});
