// The hosted execution as a command builds it: the settings of README.md#configuration resolved from the
// context (base URL, --insecure, --max-wait, --verbose request lines), warnings to stderr, and
// git's credential helper pointing back at this very svc.
import type { HostedExecution, HostedExecutionOptions } from '../../dispatch/hosted/index.js';
import { join } from 'node:path';
import { loadHosted, resolveStateDir } from '../../dispatch/index.js';
import type { Context } from '../context.js';
import { AuthError } from '../exit-codes.js';
import { resolveBaseUrl, resolveMaxWaitMs } from '../settings.js';

/** How git starts `svc git-credential`: this very svc, not whatever `svc` PATH finds. */
export function selfHelperArgv(ctx: Context): string[] {
  return [ctx.self.execPath, ctx.self.script, 'git-credential'];
}

export type HostedCommandOptions = Partial<Pick<HostedExecutionOptions, 'workspaceDir' | 'clone' | 'helperArgv' | 'refreshAheadMs'>> & {
  /**
   * Bind the client to the first Ctrl-C (default true). An executing run passes false: after an
   * interruption it must still flush its events and close `interrupted`.
   */
  interruptible?: boolean;
};

/**
 * For the dispatch commands (and `svc attach`) when SVC_RUN_ID and SVC_RUN_TOKEN are set: reads the
 * run, starts the credential broker and clones the repositories (unless `clone: false`). The
 * caller runs the legs through the engine and calls `dispose()` at the end, in a `finally`.
 */
export async function prepareHostedForCommand(ctx: Context, opts: HostedCommandOptions = {}): Promise<HostedExecution> {
  const { isHostedEnvironment, prepareHostedExecution } = await loadHosted();
  if (!isHostedEnvironment(ctx.env)) {
    throw new AuthError('not inside a hosted run: SVC_RUN_ID and SVC_RUN_TOKEN must both be set');
  }
  return prepareHostedExecution(ctx.env, {
    baseUrl: resolveBaseUrl(ctx),
    cwd: ctx.cwd,
    workspaceDir: opts.workspaceDir,
    clone: opts.clone,
    refreshAheadMs: opts.refreshAheadMs,
    helperArgv: opts.helperArgv ?? selfHelperArgv(ctx),
    client: {
      insecure: Boolean(ctx.globals.insecure),
      maxWaitMs: resolveMaxWaitMs(ctx),
      version: ctx.version,
      ...(opts.interruptible === false ? {} : { signal: ctx.interrupts.signal }),
      onRequest: (info) => ctx.out.verbose(`${info.method} ${info.path} → ${info.status || info.fault} (request ${info.requestId})`),
    },
    onWarning: (line) => ctx.out.warn(line),
    // Inside svc's state folder, made private: never a predictable /tmp path an agent could try.
    socketDir: join(resolveStateDir(ctx.env), 'private'),
  });
}
