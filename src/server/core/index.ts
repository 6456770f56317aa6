// Identity, workspaces and projects (getMe, listWorkspaces, listProjects, getProject).
import type { ServiceModule } from '../kernel.js';
import { getMe } from './me.js';
import { getProject, listProjects } from './projects.js';
import { listWorkspaces } from './workspaces.js';

export const coreModule: ServiceModule = {
  name: 'core',
  schema: '',
  routes: [getMe, listWorkspaces, listProjects, getProject],
};
