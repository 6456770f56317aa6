// The real API client, seen through the narrow port the engine is written against.
import type { ApiClient } from '../../api/client.js';
import type { DispatchService } from '../ports.js';

export function dispatchServiceOf(api: ApiClient): DispatchService {
  return {
    openDispatchRun: (body) => api.openDispatchRun(body),
    getDispatchRun: (id, o) => api.getDispatchRun(id, o),
    closeDispatchRun: (id, body, o) => api.closeDispatchRun(id, body, o),
    getCloseOutPrompt: (id) => api.getCloseOutPrompt(id),
    appendDispatchEvents: (id, body, o) => api.appendDispatchEvents(id, body, o),
    // The client's own function, not a call through this adapter: a batch of the agent's output
    // goes from the event stream to the API operation directly (CONTRIBUTING.md, the code map).
    appendEncodedEvents: api.appendDispatchEventsEncoded,
    heartbeatDispatchRun: (id, o) => api.heartbeatDispatchRun(id, o),
    getWorkItem: async (key) => (await api.getWorkItem(key)).item,
    readWorkItem: (key, o) => api.getWorkItem(key, o),
    listWorkItems: (projectKey, query) => api.listWorkItems(projectKey, query),
    listReadyBugs: (projectKey, query) => api.listReadyBugs(projectKey, query),
    listReadyContainers: (projectKey, query) => api.listReadyContainers(projectKey, query),
  };
}
