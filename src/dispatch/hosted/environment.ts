// Whether svc runs inside a hosted container, from its environment alone: asked by every dispatch
// command, so it lives apart from what a hosted run loads (simple-git, the broker), which a local
// run never needs.

export const RUN_ID_ENV = 'SVC_RUN_ID';
export const RUN_TOKEN_ENV = 'SVC_RUN_TOKEN';

/**
 * True when svc runs inside a hosted container: it has a run id and the run's own credential. A
 * run id with a set but blank SVC_RUN_TOKEN is a hosted container too, so the blank credential is
 * refused (exit 3) instead of the command quietly running as a local one.
 */
export function isHostedEnvironment(env: Record<string, string | undefined>): boolean {
  return !!env[RUN_ID_ENV] && env[RUN_TOKEN_ENV] !== undefined;
}
