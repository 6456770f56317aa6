// A positional HTTP caller for the tests of listBacklog, moveToBacklog, listDesigns, listFolders, createFolder, getFolder, updateFolder, deleteFolder, openPlanSession, addPlanTurn, submitPlanSession, getPlan, getPlanStatus: real requests against the real local
// service, answering status, parsed body and headers.
import type { TestService } from '../../support/service.js';

export interface Answer {
  status: number;
  // Bodies are checked field by field in the tests; `any` keeps those reads short.
  body: any;
  headers: Headers;
}

export type Call = (method: string, path: string, body?: unknown, token?: string | null) => Promise<Answer>;

/** A caller bound to the service (over its own `call`); `token` null sends no Authorization header. */
export function caller(svc: TestService): Call {
  return async (method, path, body, token) => {
    const res = await svc.call(method, path, { body, token });
    return { ...res, headers: new Headers(res.headers) };
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
