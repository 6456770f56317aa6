// The local service as every test uses it: in-process, on a random port, memory database, one
// seeded workspace with a project and a member holding an all-scopes token. Every response is
// validated against the contract document (once src/contract/validate.ts exists) and close()
// throws listing the violations, so any test using the service checks the document for free.
import type { ServiceConfig } from '../../src/server/kernel.js';
import { startServer, type Admin, type LocalService, type ResponseInfo } from '../../src/server/index.js';
import { loadContractHooks } from '../../src/server/contract-hooks.js';
import type { Database } from '../../src/server/db.js';

export interface TestServiceOptions {
  config?: Partial<ServiceConfig>;
  dbFile?: string;
  /** Key of the seeded project (default `PROJ`). */
  projectKey?: string;
  /** Also seed the demo workspace (`acme`, project DEMO). */
  seed?: 'demo';
  /** Validate every response against the contract (default true). */
  validate?: boolean;
  now?: () => Date;
  /** Receives every response as well. */
  onResponse?: (info: ResponseInfo) => void;
}

export interface TestService {
  url: string;
  /** Base of the API: `${url}/api/v1`. */
  api: string;
  admin: Admin;
  db: Database;
  service: LocalService;
  /** Token with every scope for the seeded user, bound to the seeded workspace. */
  token: string;
  workspaceId: string;
  userId: string;
  projectKey: string;
  /** Contract violations seen so far (close() throws when any). */
  violations: string[];
  close(): Promise<void>;
}

export async function startTestService(opts: TestServiceOptions = {}): Promise<TestService> {
  const hooks = await loadContractHooks();
  const violations: string[] = [];
  const service = await startServer({
    seed: opts.seed,
    dbFile: opts.dbFile,
    config: opts.config,
    now: opts.now,
    onResponse(info) {
      opts.onResponse?.(info);
      if (opts.validate === false || !info.operationId) return;
      const issues = [
        ...(hooks.validateResponse?.(info.operationId, info.status, info.body) ?? []),
        ...(hooks.validateResponseHeaders?.(info.operationId, info.status, info.headers) ?? []),
      ];
      for (const i of issues) violations.push(`${info.operationId} ${info.status}: ${i.path} ${i.message}`);
    },
  });
  const admin = service.admin;
  const ws = admin.createWorkspace({ name: 'Test workspace', slug: 'test' });
  const user = admin.createUser({ name: 'Tess Tester', email: 'tess@test.example' });
  admin.addMember(ws.id, user.id);
  const projectKey = opts.projectKey ?? 'PROJ';
  admin.createProject({ workspaceId: ws.id, key: projectKey, name: 'Test project' });
  const { token } = admin.createToken({ workspaceId: ws.id, userId: user.id });
  return {
    url: service.url,
    api: `${service.url}/api/v1`,
    admin,
    db: service.db,
    service,
    token,
    workspaceId: ws.id,
    userId: user.id,
    projectKey,
    violations,
    async close() {
      await service.close();
      if (violations.length > 0) {
        throw new Error(`responses violated the contract document:\n${[...new Set(violations)].join('\n')}`);
      }
    },
  };
}
