// Pull requests (docs/pull-requests.md): the writer seam, GitHub's REST API for hosted
// runs, the user's `gh` for local ones, and the call the engine makes at the end of a leg.
export { pullRequestAfterLeg, pullRequestsFile, deliveryFor } from './after-leg.js';
export type { AfterLegInput, PullRequestRecord } from './after-leg.js';
export { createGitHubWriter } from './github.js';
export type { GitHubWriterOptions } from './github.js';
export { createGitHubRest, rateLimitWaitMs, GitHubApiError } from './github-rest.js';
export { createGhWriter } from './gh.js';
export type { GhWriterOptions } from './gh.js';
export { apiBaseFor, compareUrl, originOf, parseRemote } from './remote.js';
export type { RemoteRepository } from './remote.js';
export { PullRequestError } from './types.js';
export type { PullRequestLeg, PullRequestRef, PullRequestWriter } from './types.js';
