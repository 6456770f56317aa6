// A tiny HTTP caller for the tests of operations 10–22: real requests against the real local
// service, answering status, parsed body and headers.
import type { TestService } from '../../support/service.js';

export interface Answer {
  status: number;
  // Bodies are checked field by field in the tests; `any` keeps those reads short.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  headers: Headers;
}

export type Call = (method: string, path: string, body?: unknown, token?: string | null) => Promise<Answer>;

/** A caller bound to the service; `token` null sends no Authorization header. */
export function caller(svc: TestService): Call {
  return async (method, path, body, token = svc.token) => {
    const headers: Record<string, string> = {};
    if (token !== null) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${svc.api}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
  };
}

/** A token of the seeded user with only the given scopes (and optionally narrowed to a project). */
export function tokenWith(svc: TestService, scopes: string[], projectKey?: string): string {
  return svc.admin.createToken({
    workspaceId: svc.workspaceId,
    userId: svc.userId,
    scopes: scopes as never,
    projectKey,
  }).token;
}
