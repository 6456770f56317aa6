// The git module of the local service: no tables and no API operations of its own, only the
// smart-HTTP remote under `/git/` that hosted runs clone from and push to (docs/service.md). The
// tokens it accepts are minted, recorded and revoked by the dispatch-runs module (getGitCredential).
import type { ServiceModule } from '../kernel.js';
import { gitHttpBackend } from './http-backend.js';

export { GIT_PREFIX, parseCgiHead } from './http-backend.js';
export { createRepository, parseRepositoryName, repositoryPath } from './repositories.js';
export type { CreateRepositoryOptions } from './repositories.js';

export const gitModule: ServiceModule = {
  name: 'git',
  schema: '',
  routes: [],
  raw: [gitHttpBackend],
};
