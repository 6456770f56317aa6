// The service unreachable: before any answer has come back, refused connections fail
// within about 3 s with one line naming the address; once the service has answered, --max-wait
// governs, and a terminal shows "retrying (n)…". The real client against the real local service
// (closed to make it unreachable) and the real built CLI.
import { createServer } from 'node:net';
import { describe, expect, test } from 'vitest';
import { ApiError, createApiClient, exitCodeFor } from '../../src/api/index.js';
import { connect } from '../../src/commands/connect.js';
import { runDispatchCommand } from '../../src/commands/dispatch/run-dispatch.js';
import { startFaultProxy } from '../support/fault-proxy.js';
import { isolatedEnv, makeRepo, runCli } from '../support/cli.js';
import { testContext, TtyStream } from '../support/context.js';
import { startTestService } from '../support/service.js';

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function caught(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    await fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a failure');
}

/** A clock that only moves when the client sleeps: waits are counted, not spent. */
function fakeClock() {
  let t = 1_700_000_000_000;
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => t,
    sleep: async (ms: number) => {
      sleeps.push(ms);
      t += ms;
    },
  };
}

describe('the client', () => {
  test('before any answer, refused connections give up within 3 s whatever --max-wait says', async () => {
    const clock = fakeClock();
    const port = await closedPort();
    const api = createApiClient({ baseUrl: `http://127.0.0.1:${port}`, token: 'svc_pat_x', maxWaitMs: 600_000, now: clock.now, sleep: clock.sleep });
    const error = await caught(() => api.getMe());
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).message).toBe(`could not reach the service at http://127.0.0.1:${port} — is \`svc server\` running?`);
    expect(error).toMatchObject({ status: 0, fault: 'refused' });
    expect(exitCodeFor(error)).toBe(5);
    // It did retry (a service still starting gets its chance), but only within the first 3 s.
    expect(clock.sleeps.length).toBeGreaterThanOrEqual(1);
    expect(clock.sleeps.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(3_000);
    await api.close();
  });

  test('a host that is not loopback gets a hint about the address, not about svc server', async () => {
    const clock = fakeClock();
    // A name that never resolves (RFC 6761 .invalid): a refused-class fault.
    const api = createApiClient({ baseUrl: 'https://svc.invalid', token: 'svc_pat_x', now: clock.now, sleep: clock.sleep });
    const error = (await caught(() => api.getMe())) as ApiError;
    expect(error.message).toBe('could not reach the service at https://svc.invalid — check --base-url / SVC_BASE_URL and the network');
    await api.close();
  });

  test('once the service has answered, a refused connection is retried until --max-wait', async () => {
    const svc = await startTestService();
    const clock = fakeClock();
    const api = createApiClient({ baseUrl: svc.url, token: svc.token, maxWaitMs: 20_000, now: clock.now, sleep: clock.sleep });
    await api.getMe();
    await svc.close();
    const error = (await caught(() => api.getMe())) as ApiError;
    expect(error).toMatchObject({ status: 0, fault: 'refused' });
    expect(error.message).not.toMatch(/svc server/);
    const waited = clock.sleeps.reduce((a, b) => a + b, 0);
    expect(waited).toBeGreaterThan(3_000);
    expect(waited).toBeLessThanOrEqual(20_000);
    await api.close();
  });
});

describe('a command', () => {
  test('on a terminal, each retry shows "retrying (n)…" on stderr; piped, nothing', async () => {
    for (const tty of [true, false]) {
      const svc = await startTestService();
      const ctx = testContext({ tty, env: { SVC_BASE_URL: svc.url, SVC_TOKEN: svc.token, SVC_MAX_WAIT: '1s', TERM: 'xterm-256color' } });
      const api = connect(ctx);
      await api.getMe();
      await svc.close();
      const error = await caught(() => api.getMe());
      expect(exitCodeFor(error)).toBe(5);
      if (tty) expect(ctx.stderr.text).toMatch(/service unreachable — retrying \(1\)…/);
      else expect(ctx.stderr.text).toBe('');
      expect(ctx.stdout.text).toBe('');
      await api.close();
    }
  });

  test('during a dispatch on a terminal, the retry line is printed by the progress view, not through the spinner', async () => {
    const svc = await startTestService();
    const proxy = await startFaultProxy({ target: svc.url, seed: 7 });
    try {
      const key = svc.admin.createWorkItem({ projectKey: svc.projectKey, kind: 'task', title: 'slow', type: 'code' }).key;
      // The service answers (the open, the reads), then one append gets a 503 while the agent runs.
      proxy.setPlan([{ method: 'POST', path: /\/events$/, times: 1, fault: { kind: 'status', status: 503 } }]);
      const repo = await makeRepo();
      const ctx = testContext({
        streams: { stdout: new TtyStream(), stderr: new TtyStream() },
        env: { SVC_BASE_URL: proxy.url, SVC_TOKEN: svc.token, SVC_STATE_DIR: repo + '-state', TERM: 'xterm-256color', PATH: process.env.PATH },
      });
      await runDispatchCommand(
        { command: 'run', keys: [key], agentCmd: 'sh -c "sleep 1.2; git -c user.name=a -c user.email=a@example.invalid commit -q --allow-empty -m x"', repo },
        ctx,
      );
      expect(ctx.exitCode, ctx.stderr.text).toBe(0);
      // Persisted by the spinner (ora clears its frame, then writes the symbol and the line), not
      // written into the middle of a frame.
      expect(ctx.stderr.text).toMatch(/⚠\S* HTTP 503 — retrying \(1\)…\n/);
    } finally {
      await proxy.close();
      await svc.close();
    }
  });

  test.each([
    ['items list', ['items', 'list', '-p', 'PROJ']],
    ['run KEY, with --max-wait 10m', ['run', 'PROJ-1', '--agent-cmd', 'true', '--max-wait', '10m']],
  ])('%s with no service listening: one line within about 3 s, exit 5', async (_name, args) => {
    const port = await closedPort();
    const repo = await makeRepo();
    const started = Date.now();
    const r = await runCli(args, {
      env: isolatedEnv({ SVC_BASE_URL: `http://127.0.0.1:${port}`, SVC_TOKEN: 'svc_pat_test' }),
      cwd: repo,
    });
    const took = Date.now() - started;
    expect(r.code, r.stderr).toBe(5);
    expect(r.stderr).toBe(`svc: could not reach the service at http://127.0.0.1:${port} — is \`svc server\` running?\n`);
    expect(took).toBeLessThan(5_000);
  });
});
