// Resolves every setting once, with the precedence of README.md#configuration: flag > environment > stored
// > default. The token comes from SVC_TOKEN or the store, never from a flag (argv is visible to
// every process on the machine).
import { DEFAULT_MAX_WAIT_MS } from '../api/retry.js';
import { parseDuration } from '../dispatch/index.js';
import type { Context } from './context.js';
import { AuthError, UsageError } from './exit-codes.js';

/** Where `svc server` listens by default: the embedded local service. */
export const DEFAULT_BASE_URL = 'http://127.0.0.1:8787';

export interface Connection {
  baseUrl: string;
  token: string;
  insecure: boolean;
  maxWaitMs: number;
}

export function resolveBaseUrl(ctx: Context): string {
  const raw = ctx.globals.baseUrl ?? ctx.env.SVC_BASE_URL ?? ctx.config().get('baseUrl') ?? DEFAULT_BASE_URL;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`base URL '${raw}' is not a URL; give one like https://svc.example.com`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`base URL '${raw}' must be http:// or https://`);
  }
  return raw.replace(/\/+$/, '');
}

export function resolveMaxWaitMs(ctx: Context): number {
  const raw = ctx.globals.maxWait ?? ctx.env.SVC_MAX_WAIT ?? ctx.config().get('maxWait');
  return raw === undefined ? DEFAULT_MAX_WAIT_MS : parseDuration(raw, '--max-wait');
}

export function resolveProject(ctx: Context, flag: string | undefined): string | undefined {
  return flag ?? ctx.env.SVC_PROJECT ?? ctx.config().get('project');
}

export function requireProject(ctx: Context, flag: string | undefined): string {
  const project = resolveProject(ctx, flag);
  if (!project) throw new UsageError('no project: pass --project KEY, set SVC_PROJECT, or `svc config set project KEY`');
  return project;
}

/** The personal access token, checked for its prefix before any request is made. */
export function resolveToken(ctx: Context): string {
  const token = ctx.env.SVC_TOKEN || ctx.config().get('token');
  if (!token) {
    throw new AuthError('not logged in: set SVC_TOKEN or run `svc auth login --with-token`');
  }
  if (!token.startsWith('svc_pat_')) {
    throw new AuthError('the token is not a personal access token (it must start with svc_pat_)');
  }
  return token;
}

export function resolveConnection(ctx: Context): Connection {
  return {
    baseUrl: resolveBaseUrl(ctx),
    token: resolveToken(ctx),
    insecure: Boolean(ctx.globals.insecure),
    maxWaitMs: resolveMaxWaitMs(ctx),
  };
}
