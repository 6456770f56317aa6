// `svc ...argv` in-process, to its end: a thin name over svcInProcess (test/support/svc-in-process.ts),
// which runs the real commander tree through the entry's own runProgram. The environment is the
// whole one the command sees, with a private config folder and agents run as svc itself unless set;
// the streams are no terminal, as behind a pipe.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CliResult } from './cli.js';
import { svcInProcess } from './svc-in-process.js';

export interface ProgramOptions {
  /** The whole environment the command sees (nothing is read from process.env). */
  env?: Record<string, string | undefined>;
  stdin?: string;
  cwd?: string;
}

export function runProgram(argv: string[], opts: ProgramOptions = {}): Promise<CliResult> {
  const env = { SVC_CONFIG_DIR: mkdtempSync(join(tmpdir(), 'svc-cfg-')), SVC_AGENT_USER: 'none', ...opts.env };
  return svcInProcess(argv, { env, input: opts.stdin ?? '', cwd: opts.cwd });
}

/**
 * The whole environment of a command run against `service` by runProgram: PATH, a fresh home and
 * state folder, no colour, and `over` on top (nothing else of process.env).
 */
export function programEnv(service: { url: string; token: string }, over: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return {
    PATH: process.env.PATH,
    HOME: mkdtempSync(join(tmpdir(), 'svc-home-')),
    SVC_BASE_URL: service.url,
    SVC_TOKEN: service.token,
    SVC_STATE_DIR: mkdtempSync(join(tmpdir(), 'svc-state-')),
    NO_COLOR: '1',
    ...over,
  };
}
