// Folders (listFolders, createFolder, getFolder, updateFolder, deleteFolder): a per-project tree that files work items.
import type { ServiceModule } from '../kernel.js';
import { deleteFolder } from './delete.js';
import { getFolder, listFolders } from './read.js';
import { FOLDERS_SCHEMA } from './store.js';
import { createFolder, updateFolder } from './write.js';

export const foldersModule: ServiceModule = {
  name: 'folders',
  schema: FOLDERS_SCHEMA,
  routes: [
    { operationId: 'listFolders', handle: listFolders },
    { operationId: 'createFolder', handle: createFolder },
    { operationId: 'getFolder', handle: getFolder },
    { operationId: 'updateFolder', handle: updateFolder },
    { operationId: 'deleteFolder', handle: deleteFolder },
  ],
};
