// Hosted runs (docs/hosted.md): the run credential, git credentials served to git
// through `svc git-credential`, and the run's repositories cloned and pushed without a token ever
// leaving this process's memory.
export { DEFAULT_REFRESH_AHEAD_MS, GitCredentialBroker, NoGitCredentialError } from './broker.js';
export type { CredentialQuery, GitCredentialBrokerOptions, GitCredentialSource } from './broker.js';
export { readCredentialInput, runGitCredential } from './credential-helper.js';
export type { GitCredentialIo, HelperStatus } from './credential-helper.js';
export { askBroker, CREDENTIAL_SOCKET_ENV, startCredentialServer } from './credential-socket.js';
export type { CredentialAnswer, CredentialRequest, CredentialServer } from './credential-socket.js';
export { isHostedEnvironment, prepareHostedExecution, RUN_ID_ENV, RUN_TOKEN_ENV } from './execution.js';
export type { HostedExecution, HostedExecutionOptions } from './execution.js';
export {
  cloneDirOf,
  configureRepository,
  credentialConfig,
  gitEnv,
  helperCommand,
  hostedGit,
  isAuthFailure,
  prepareHostedRepositories,
  pushBranch,
  targetRepositoriesOf,
} from './git.js';
export type { HostedGitOptions, HostedRepository, PrepareHostedRepositoriesOptions, PushOptions } from './git.js';
export { isOpenLeg, readHostedCards, readHostedRun } from './run.js';
export type { HostedCard, HostedRun, HostedRunReader } from './run.js';
