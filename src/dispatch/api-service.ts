// The real API client, seen through the narrow port the engine is written against.
import type { ApiClient } from '../api/client.js';
import type { DispatchService } from './ports.js';

export function dispatchServiceOf(api: ApiClient): DispatchService {
  return {
    openDispatchRun: (body) => api.openDispatchRun(body),
    getDispatchRun: (id) => api.getDispatchRun(id),
    closeDispatchRun: (id, body) => api.closeDispatchRun(id, body),
    getCloseOutPrompt: (id) => api.getCloseOutPrompt(id),
    appendDispatchEvents: (id, body) => api.appendDispatchEvents(id, body),
    appendEncodedEvents: (id, json) => api.appendDispatchEventsEncoded(id, json),
    heartbeatDispatchRun: (id) => api.heartbeatDispatchRun(id),
    getWorkItem: async (key) => (await api.getWorkItem(key)).item,
    listWorkItems: (projectKey, query) => api.listWorkItems(projectKey, query),
    listReadyBugs: (projectKey, query) => api.listReadyBugs(projectKey, query),
    listReadyContainers: (projectKey, query) => api.listReadyContainers(projectKey, query),
  };
}
