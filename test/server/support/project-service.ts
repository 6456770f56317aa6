// The set-up the tests of listBacklog–22 share: one local service per test file, started before
// its tests and closed after them, a caller bound to it, and a project of its own for each test so
// nothing one test writes shows in another's listings.
import { afterAll, beforeAll } from 'vitest';
import { startTestService, type TestService } from '../../support/service.js';
import { caller, type Call } from './http.js';

export interface ProjectService {
  /** The service; filled in by beforeAll, so read it inside tests and hooks only. */
  svc: TestService;
  call: Call;
  /** A new project of the seeded workspace (`<prefix><n>`, named `<name> <n>`); returns its key. */
  project(): string;
}

/** Registers the file's beforeAll and afterAll; the answer can be destructured at the top of the file. */
export function useProjectService(prefix: string, name: string): ProjectService {
  // One object that beforeAll fills, so what the file destructured stays the service it started.
  const svc = {} as TestService;
  let n = 0;
  beforeAll(async () => {
    Object.assign(svc, await startTestService());
  });
  afterAll(async () => {
    await svc.close?.();
  });
  return {
    svc,
    call: caller(svc),
    project() {
      const key = `${prefix}${++n}`;
      svc.admin.createProject({ workspaceId: svc.workspaceId, key, name: `${name} ${n}` });
      return key;
    },
  };
}
