// Everything a dispatch command needs to execute a hosted run, built from the environment the
// platform starts the container with (SVC_RUN_ID, SVC_RUN_TOKEN, SVC_BASE_URL; never SVC_TOKEN):
// the API client on the run credential, the run and its cards, the git credential broker behind
// its socket, git's environment, and the run's repositories cloned into the workspace. A runner of
// the local service reaches it through the socket the executor mounted (service-forward.ts).
import { createApiClient, type ApiClient, type ClientOptions } from '../../api/index.js';
import { sameRepository } from '../../contract/repository-ref.js';
import { GitCredentialBroker } from './broker.js';
import { startCredentialServer, type CredentialServer } from './credential-socket.js';
import { cloneDirOf, gitEnv, prepareHostedRepositories, pushBranch, targetRepositoriesOf, type HostedRepository } from './git.js';
import { readHostedCards, readHostedRun, type HostedCard, type HostedRun } from './run.js';
import { RUN_ID_ENV, RUN_TOKEN_ENV } from './environment.js';
import { forwardService, type ServiceForward } from './service-forward.js';

export { isHostedEnvironment, RUN_ID_ENV, RUN_TOKEN_ENV } from './environment.js';

export interface HostedExecutionOptions {
  /** Default: SVC_BASE_URL. */
  baseUrl?: string;
  /** Where the repositories are cloned (`<dir>/<owner>/<name>`). Default: SVC_REPO, else `cwd`. */
  workspaceDir?: string;
  cwd?: string;
  /** How git starts `svc git-credential`; the CLI passes `[node, bin/svc.js, 'git-credential']`. */
  helperArgv: readonly string[];
  /**
   * Clone the repositories now (default true); `--dry-run` only looks. A function decides once the
   * run is read (`svc attach` with no agent to execute with only looks).
   */
  clone?: boolean | ((run: HostedRun) => boolean);
  /** Passed to the API client (insecure, version, maxWaitMs, signal, ...). */
  client?: Omit<Partial<ClientOptions>, 'baseUrl' | 'token' | 'credentialKind'>;
  /** Broker tuning (tests). */
  refreshAheadMs?: number;
  /** The broker's clock, epoch ms (default Date.now): tests move it instead of waiting a token out. */
  now?: () => number;
  /** Broker and socket faults, one line each, never a token. */
  onWarning?: (line: string) => void;
  /** svc's private folder (0700) the broker's socket goes into; default the system temp folder. */
  socketDir?: string;
}

export interface HostedExecution {
  /** The API client on the run credential (getDispatchRun, getWorkItem, appendDispatchEvents, closeDispatchRun, getGitCredential only). */
  api: ApiClient;
  run: HostedRun;
  /** The legs still to run, with their work items. */
  cards: HostedCard[];
  broker: GitCredentialBroker;
  /** The only environment a git process of this run gets (includes the broker's socket). */
  gitEnv: Record<string, string>;
  helperArgv: readonly string[];
  /** The clones in the workspace (empty when `clone: false`). */
  repositories: HostedRepository[];
  /** The clone a card works in: its first target repository's; null when it names none. */
  repoDirFor(key: string): string | null;
  /** Pushes `branch` of a clone (an implemented leg, `--push`). */
  pushBranch(repoDir: string, branch: string): Promise<void>;
  /** The credentials in play, for the redactor: the run credential and every git token so far. */
  secrets(): string[];
  /** Stops the socket, forgets every token, releases the client. Safe to call twice. */
  dispose(): Promise<void>;
}

/** Builds the hosted execution, or throws (nothing is left running when it does). */
export async function prepareHostedExecution(env: Record<string, string | undefined>, opts: HostedExecutionOptions): Promise<HostedExecution> {
  const runId = env[RUN_ID_ENV];
  const token = env[RUN_TOKEN_ENV];
  if (!runId || token === undefined) throw new Error(`a hosted run needs ${RUN_ID_ENV} and ${RUN_TOKEN_ENV}`);
  const baseUrl = opts.baseUrl ?? env.SVC_BASE_URL;
  if (!baseUrl) throw new Error('a hosted run needs the service address (SVC_BASE_URL or --base-url)');

  // Before the first request: every one of them, git's too, goes through it.
  const forward: ServiceForward | null = await forwardService(env, baseUrl);
  const api = createApiClient({ ...opts.client, baseUrl, token, credentialKind: 'run' });
  const broker = new GitCredentialBroker({ api, runId, refreshAheadMs: opts.refreshAheadMs, now: opts.now });
  let server: CredentialServer | null = null;
  const dispose = async () => {
    broker.dispose();
    await server?.close();
    server = null;
    await api.close();
    await forward?.close();
  };
  try {
    const run = await readHostedRun(api, runId);
    const cards = await readHostedCards(api, run);
    server = await startCredentialServer(broker, opts.onWarning, opts.socketDir);
    const env_ = gitEnv(env, server.socketPath);
    const workspaceDir = opts.workspaceDir ?? env.SVC_REPO ?? opts.cwd ?? '.';
    const git = { env: env_, helperArgv: opts.helperArgv };
    const repositories = (typeof opts.clone === 'function' ? !opts.clone(run) : opts.clone === false)
      ? []
      : await prepareHostedRepositories({
          ...git,
          items: cards.map((c) => c.item),
          workspaceDir,
          broker,
          checkouts: [workspaceDir, ...(opts.cwd ? [opts.cwd] : [])],
        });
    const byDir = new Map(repositories.map((r) => [r.dir, r.repository]));
    return {
      api,
      run,
      cards,
      broker,
      gitEnv: env_,
      helperArgv: opts.helperArgv,
      repositories,
      repoDirFor(key) {
        const card = cards.find((c) => c.card.workItemKey === key);
        const first = card ? targetRepositoriesOf(card.item)[0] : undefined;
        if (!first) return null;
        const prepared = repositories.find((r) => r.repository === first || sameRepository(r.repository, first));
        return prepared ? prepared.dir : cloneDirOf(workspaceDir, first);
      },
      pushBranch(repoDir, branch) {
        const repository = byDir.get(repoDir);
        if (!repository) return Promise.reject(new Error(`not a clone of this run: ${repoDir}`));
        return pushBranch(repoDir, branch, { ...git, broker, repository });
      },
      secrets: () => [token, ...broker.secrets()],
      dispose,
    };
  } catch (err) {
    await dispose();
    throw err;
  }
}
