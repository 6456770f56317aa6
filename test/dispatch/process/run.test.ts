// svc's own short programs (process/run.ts): what each caller relies on of it — the exit code and
// output, stdin, the environment and folder, a timeout, a bound on output, and a program that
// cannot start — the same through run, runOk and runSync.
import { describe, expect, test } from 'vitest';
import { firstLine, run, RunError, runOk, runRaw, runSync } from '../../../src/dispatch/process/run.js';

const node = process.execPath;

describe('run', () => {
  test('exit code, stdout and stderr; stdin is the input, then closed; cwd defaults to /', async () => {
    const r = await run(node, ['-e', 'process.stdin.pipe(process.stdout); process.stderr.write(process.cwd()); process.exitCode = 3'], { input: 'héllo' });
    expect(r).toEqual({ code: 3, signal: null, stdout: 'héllo', stderr: '/', errno: null });
  });

  test('the environment is exactly env when given', async () => {
    const r = await run(node, ['-e', 'process.stdout.write(JSON.stringify(Object.keys(process.env).filter((k) => k.startsWith("SVC_T"))))'], {
      env: { SVC_TONE: '1' },
    });
    expect(JSON.parse(r.stdout)).toEqual(['SVC_TONE']);
  });

  test('a program that cannot start: code null, its errno, the reason on stderr', async () => {
    const r = await run('/nonexistent/program', []);
    expect(r).toMatchObject({ code: null, errno: 'ENOENT' });
    expect(r.stderr).toMatch(/ENOENT/);
  });

  test('killed by its timeout: code null and SIGTERM', async () => {
    const r = await run(node, ['-e', 'setTimeout(() => {}, 60_000)'], { timeoutMs: 200 });
    expect(r).toMatchObject({ code: null, signal: 'SIGTERM', errno: null });
  });

  test('more than maxBuffer on stdout: killed, ERR_CHILD_PROCESS_STDIO_MAXBUFFER, and no more kept than the bound', async () => {
    const r = await runRaw(node, ['-e', 'process.stdout.write("x".repeat(1 << 20)); setTimeout(() => {}, 60_000)'], { maxBuffer: 1000, timeoutMs: 30_000 });
    expect(r).toMatchObject({ code: null, errno: 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER' });
    expect(r.stdout.length).toBeLessThanOrEqual(1000);
  });
});

describe('runOk and runSync', () => {
  test('runOk: stdout on exit 0; a RunError with the last line, the exit code and the output otherwise', async () => {
    expect(await runOk(node, ['-e', 'console.log("yes")'])).toBe('yes\n');
    const error = await runOk(node, ['-e', 'console.error("first\\nlast"); process.exit(4)'], {}, 'probe').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RunError);
    expect(error).toMatchObject({ message: 'probe: last', exitCode: 4, code: 4, stderr: 'first\nlast\n' });
    // As execFile's errors: `code` is the errno of a program that could not start.
    expect(await runOk('/nonexistent/program', []).catch((e: RunError) => e.code)).toBe('ENOENT');
  });

  test('runSync answers as run does', () => {
    expect(runSync(node, ['-e', 'process.stdout.write("a"); process.exit(2)'], { cwd: '/tmp' })).toEqual({
      code: 2,
      signal: null,
      stdout: 'a',
      stderr: '',
      errno: null,
    });
    expect(runSync('/nonexistent/program', [])).toMatchObject({ code: null, errno: 'ENOENT' });
  });
});

describe('firstLine', () => {
  test("a failed program's message before the input it quotes, else why it did not start, else how it ended", async () => {
    expect(firstLine(await run('sh', ['-c', 'printf "Error: syntax error\\nadd rule x\\n^^^\\n" >&2; exit 1']))).toBe('Error: syntax error');
    expect(firstLine(await run('svc-no-such-program', []))).toBe('spawn svc-no-such-program ENOENT');
    expect(firstLine(await run('sh', ['-c', 'exit 3']))).toBe('exit 3');
    expect(firstLine(await run('sh', ['-c', 'kill -TERM $$']))).toBe('exit SIGTERM');
  });
});
