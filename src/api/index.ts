// The client of the service: what commands and the dispatch engine import.
export { createApiClient } from './client.js';
export type { ApiClient, CallOptions, DesignRow, PageQuery, WorkItemWithEtag } from './client.js';
export { ApiError, ClientConfigError, EXIT, exitCodeFor, redactDeep, redactTokens } from './errors.js';
export type { ApiErrorInit, ConfigProblem, ExitCode, WireFault } from './errors.js';
export { collectAll, paginate, paginatePages } from './paginate.js';
export type { FetchPage, PaginateOptions } from './paginate.js';
export { createTransport, encodeQuery, validateClientOptions } from './request.js';
export type { CallSpec, ClientOptions, QueryValue, Reply, RequestInfo, Transport } from './request.js';
export { DEFAULT_TUNING, decideRetry } from './retry-policy.js';
export { DEFAULT_MAX_WAIT_MS, Retrier, WaitBudget, backoff, retry } from './retry.js';
export type { BackoffShape, Pacing, RetrierOptions } from './retry.js';
export type { RetryDecision, RetryTuning } from './retry-policy.js';
