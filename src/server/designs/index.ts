// Designs (listDesigns): approved design cards of a project, newest first.
import type { ServiceModule } from '../kernel.js';
import { listDesigns } from './list.js';
import { DESIGNS_SCHEMA } from './store.js';

export { createDesign, setDesignStatus, type DesignInput, type DesignAssetInput } from './store.js';

export const designsModule: ServiceModule = {
  name: 'designs',
  schema: DESIGNS_SCHEMA,
  routes: [{ operationId: 'listDesigns', handle: listDesigns }],
};
