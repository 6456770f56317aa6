// The 31 operations of api-v1, in the contract's order. The OpenAPI document, the
// client's per-operation functions, the local service's router and the auth-matrix test all read
// this one table, so an operation cannot exist on one side only.
import type { Scope } from './types.js';

export interface Operation {
  /** The operation's number in the contract's table of operations. */
  n: number;
  id: string;
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Path below /api/v1, with `{param}` placeholders. */
  path: string;
  permission: Scope;
  /** A POST that is safe to retry (the open carries an idempotencyKey). */
  idempotent?: boolean;
}

export const OPERATIONS = [
  { n: 1, id: 'getMe', method: 'GET', path: '/me', permission: 'project:browse' },
  { n: 2, id: 'listWorkspaces', method: 'GET', path: '/workspaces', permission: 'project:browse' },
  { n: 3, id: 'listProjects', method: 'GET', path: '/projects', permission: 'project:browse' },
  { n: 4, id: 'getProject', method: 'GET', path: '/projects/{projectKey}', permission: 'project:browse' },
  { n: 5, id: 'listWorkItems', method: 'GET', path: '/projects/{projectKey}/work-items', permission: 'project:browse' },
  { n: 6, id: 'createWorkItem', method: 'POST', path: '/projects/{projectKey}/work-items', permission: 'work_item:edit' },
  { n: 7, id: 'countWorkItems', method: 'GET', path: '/projects/{projectKey}/work-items/count', permission: 'project:browse' },
  { n: 8, id: 'getWorkItem', method: 'GET', path: '/work-items/{key}', permission: 'project:browse' },
  { n: 9, id: 'updateWorkItem', method: 'PATCH', path: '/work-items/{key}', permission: 'work_item:edit' },
  { n: 10, id: 'listBacklog', method: 'GET', path: '/projects/{projectKey}/backlog', permission: 'project:browse' },
  { n: 11, id: 'moveToBacklog', method: 'POST', path: '/projects/{projectKey}/backlog/work-items', permission: 'sprint:manage' },
  { n: 12, id: 'listDesigns', method: 'GET', path: '/projects/{projectKey}/designs', permission: 'project:browse' },
  { n: 13, id: 'listFolders', method: 'GET', path: '/projects/{projectKey}/folders', permission: 'project:browse' },
  { n: 14, id: 'createFolder', method: 'POST', path: '/projects/{projectKey}/folders', permission: 'work_item:edit' },
  { n: 15, id: 'getFolder', method: 'GET', path: '/folders/{folderId}', permission: 'project:browse' },
  { n: 16, id: 'updateFolder', method: 'PATCH', path: '/folders/{folderId}', permission: 'work_item:edit' },
  { n: 17, id: 'deleteFolder', method: 'DELETE', path: '/folders/{folderId}', permission: 'work_item:edit' },
  { n: 18, id: 'openPlanSession', method: 'POST', path: '/projects/{projectKey}/plan-session', permission: 'ai:plan' },
  { n: 19, id: 'addPlanTurn', method: 'POST', path: '/projects/{projectKey}/plan-session/turns', permission: 'ai:plan' },
  { n: 20, id: 'submitPlanSession', method: 'POST', path: '/projects/{projectKey}/plan-session/submissions', permission: 'ai:plan' },
  { n: 21, id: 'getPlan', method: 'GET', path: '/plans/{planId}', permission: 'project:browse' },
  { n: 22, id: 'getPlanStatus', method: 'GET', path: '/plans/{planId}/status', permission: 'project:browse' },
  { n: 23, id: 'listReadyBugs', method: 'GET', path: '/projects/{projectKey}/ready/bugs', permission: 'project:browse' },
  { n: 24, id: 'listReadyContainers', method: 'GET', path: '/projects/{projectKey}/ready/containers', permission: 'project:browse' },
  { n: 25, id: 'openDispatchRun', method: 'POST', path: '/dispatch-runs', permission: 'work_item:edit', idempotent: true },
  { n: 26, id: 'getDispatchRun', method: 'GET', path: '/dispatch-runs/{id}', permission: 'project:browse' },
  { n: 27, id: 'closeDispatchRun', method: 'POST', path: '/dispatch-runs/{id}/close', permission: 'work_item:edit' },
  { n: 28, id: 'getCloseOutPrompt', method: 'GET', path: '/dispatch-runs/{id}/close-out-prompt', permission: 'project:browse' },
  { n: 29, id: 'appendDispatchEvents', method: 'POST', path: '/dispatch-runs/{id}/events', permission: 'work_item:edit' },
  { n: 30, id: 'getGitCredential', method: 'POST', path: '/dispatch-runs/{id}/git-credential', permission: 'work_item:edit' },
  { n: 31, id: 'heartbeatDispatchRun', method: 'POST', path: '/dispatch-runs/{id}/heartbeat', permission: 'work_item:edit' },
] as const satisfies readonly Operation[];

export type OperationId = (typeof OPERATIONS)[number]['id'];

export const API_PREFIX = '/api/v1';
export const OPENAPI_PATH = '/api/openapi/v1.json';

/** Operations a hosted run's own credential may call (docs/hosted.md), on its own run only. */
export const RUN_CREDENTIAL_OPERATIONS: readonly OperationId[] = [
  'getDispatchRun',
  'getWorkItem',
  'appendDispatchEvents',
  'closeDispatchRun',
  'getGitCredential',
];
