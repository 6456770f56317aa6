// Work items (listWorkItems, createWorkItem, countWorkItems, getWorkItem, updateWorkItem).
import type { ServiceModule } from '../kernel.js';
import { getWorkItem } from './detail.js';
import { countWorkItems, listWorkItems } from './list.js';
import { createWorkItem, updateWorkItem } from './write.js';

export const workItemsModule: ServiceModule = {
  name: 'work-items',
  schema: '',
  routes: [listWorkItems, createWorkItem, countWorkItems, getWorkItem, updateWorkItem],
};

export { filteredItems, applyFilter, parseFilter } from './filter.js';
export type { FilterScope } from './filter-fields.js';
export { ItemQuery } from './query.js';
export { summariesOf, toLinkItem, toSummary, rowByKey, rowById, rowsByIds, type WorkItemRow } from './rows.js';
export { buildDetail, itemForKey, etagOf } from './detail.js';
export { insertWorkItem, updateColumns, touch } from './store.js';
export { categoryOf, isDone, STATUSES, DONE_STATUSES } from './status.js';
export { filterParam } from './list.js';
