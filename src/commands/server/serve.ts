// `svc server`: runs the local service until a signal stops it.
import { parseDuration } from '../../dispatch/index.js';
import type { HostedExecutorOptions } from '../../server/hosted-executor/index.js';
import type { Context } from '../context.js';
import { UsageError } from '../exit-codes.js';
import type { ServeFlags } from './flags.js';

/** What the service is started with: the plain flags, and the hosted executor's options built from the rest. */
export type ServeOptions = Pick<ServeFlags, 'port' | 'host' | 'db' | 'seed' | 'rateLimit' | 'gitRoot'> & { hosted?: HostedExecutorOptions };

/** `cpu=500m,memory=512Mi` → { cpu: '500m', memory: '512Mi' }. */
function resourceList(raw: string | undefined, flag: string): Record<string, string> | undefined {
  if (raw === undefined) return undefined;
  const out: Record<string, string> = {};
  for (const part of raw
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const m = /^([a-z0-9.\-/]+)=([0-9A-Za-z.+-]+)$/.exec(part);
    if (!m) throw new UsageError(`${flag} takes NAME=QUANTITY pairs such as cpu=500m,memory=512Mi, got '${part}'`);
    out[m[1]!] = m[2]!;
  }
  return out;
}

/** Flags to options: every --hosted-* flag but the engine needs the engine. */
export function serveOptions(flags: ServeFlags, version: string): ServeOptions {
  const { hostedExecutor: engine, port, host, db, seed, rateLimit, gitRoot } = flags;
  const hostedOnly = (
    [
      'hostedImage',
      'hostedAgentCmd',
      'hostedBaseUrl',
      'hostedTimeout',
      'hostedLogs',
      'hostedNetwork',
      'kubeconfig',
      'hostedNamespace',
      'hostedRequests',
      'hostedLimits',
      'hostedPoll',
      'dryRun',
    ] as const
  ).filter((k) => flags[k] !== undefined);
  if (!engine) {
    if (hostedOnly.length)
      throw new UsageError(`--${hostedOnly[0]!.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} needs --hosted-executor podman|docker|kubernetes`);
    return { port, host, db, seed, rateLimit, gitRoot };
  }
  if (flags.hostedBaseUrl !== undefined && !/^https?:\/\/[^\s/]+/.test(flags.hostedBaseUrl)) {
    throw new UsageError(`--hosted-base-url takes an http(s) URL, got '${flags.hostedBaseUrl}'`);
  }
  const kubernetesOnly = (['kubeconfig', 'hostedNamespace', 'hostedRequests', 'hostedLimits', 'hostedPoll'] as const).find((k) => flags[k] !== undefined);
  if (engine !== 'kubernetes' && kubernetesOnly) {
    throw new UsageError(`--${kubernetesOnly.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} is for --hosted-executor kubernetes`);
  }
  const hosted: HostedExecutorOptions = {
    engine,
    image: flags.hostedImage ?? `localhost/svc:${version}`,
    agentCmd: flags.hostedAgentCmd,
    baseUrl: flags.hostedBaseUrl,
    dryRun: flags.dryRun,
    timeoutMs: flags.hostedTimeout === undefined ? undefined : parseDuration(flags.hostedTimeout, '--hosted-timeout'),
    logDir: flags.hostedLogs,
    network: flags.hostedNetwork,
    kubernetes: {
      kubeconfig: flags.kubeconfig,
      namespace: flags.hostedNamespace,
      requests: resourceList(flags.hostedRequests, '--hosted-requests'),
      limits: resourceList(flags.hostedLimits, '--hosted-limits'),
      ...(flags.hostedPoll === undefined ? {} : { pollMs: parseDuration(flags.hostedPoll, '--hosted-poll') }),
    },
  };
  return { port, host, db, seed, rateLimit, gitRoot, hosted };
}

export async function runServe(opts: ServeOptions, ctx: Context): Promise<void> {
  const { runServerCommand } = await import('../../server/index.js');
  // The first signal stops the server (closed, the database flushed); exit 130/143.
  ctx.interrupts.handle?.('graceful');
  // The engine's commands see the command's environment (CONTAINERS_CONF, DOCKER_HOST, KUBECONFIG).
  const hosted = opts.hosted && { ...opts.hosted, env: ctx.env as NodeJS.ProcessEnv };
  ctx.exitCode = await runServerCommand({ command: 'serve', ...opts, hosted }, { stdout: ctx.stdout, stderr: ctx.stderr, signal: ctx.interrupts.signal });
}
