// The Kubernetes objects of one hosted run, as plain data: a batch/v1 Job running the image's
// `svc attach`, and the Secret holding the run's credential, owned by the Job (so the Job's
// cleanup, ttlSecondsAfterFinished, takes the Secret with it). The Job names the Secret only by
// reference, as a volume: no plain value of the Job holds the credential, and no environment
// variable of the container does either (the image's entry point reads the file). svc runs as
// root in the pod, in a user namespace where the cluster offers one, with only the capabilities of
// the boundary and of the legs' fence (NET_ADMIN: nftables rules in the pod's own network, never
// the node's: no hostNetwork), and gives each agent a pool uid (docs/hosted.md). Checked against
// Kubernetes' published schema in test/server/hosted-executor/kubernetes-runner.test.ts.
import { createHash } from 'node:crypto';
import { RUNNER_CAPABILITIES, type RunnerSpec } from './types.js';

/** requests and limits of the runner's container, e.g. { cpu: '500m', memory: '512Mi' }. */
export type ResourceList = Record<string, string>;

export interface KubernetesRunnerOptions {
  namespace: string;
  requests?: ResourceList;
  limits?: ResourceList;
  /** Seconds the finished Job (and its Secret) are kept before Kubernetes deletes them. */
  ttlSecondsAfterFinished: number;
}

export const SECRET_KEY = 'token';
/** Where the credential's file is: the path the image's entry point reads (scripts/svc-entrypoint.sh). */
export const SECRET_DIR = '/run/secrets';
export const SECRET_FILE = 'svc-run-token';
/** Read-only, for its owner (root) alone; no fsGroup, which would open it to a group. */
const SECRET_MODE = 0o400;
/** Seconds Kubernetes' own deadline comes after the run's. */
export const DEADLINE_GRACE_S = 60;

/**
 * A DNS-1123 label from a run id: lower case, with a hash of the exact id, since run ids are
 * base62 and two of them may differ only in case.
 */
export function jobName(runId: string): string {
  const readable = runId
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .slice(0, 40)
    .replace(/-+$/, '');
  const hash = createHash('sha256').update(runId).digest('hex').slice(0, 8);
  return `svc-${readable}-${hash}`;
}

const labels = (spec: RunnerSpec) => ({
  'app.kubernetes.io/name': 'svc-runner',
  'app.kubernetes.io/managed-by': 'svc',
  // A run id is base62 with one underscore: a valid label value as it is.
  'svc-cli/run-id': spec.runId,
});

/** The Job, created suspended: it starts once its Secret exists (kubernetes.ts). */
export function jobManifest(spec: RunnerSpec, opts: KubernetesRunnerOptions, suspend: boolean) {
  const resources = {
    ...(opts.requests && Object.keys(opts.requests).length ? { requests: opts.requests } : {}),
    ...(opts.limits && Object.keys(opts.limits).length ? { limits: opts.limits } : {}),
  };
  const scratch = ['work', 'home', 'tmp'];
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: spec.name, namespace: opts.namespace, labels: labels(spec) },
    spec: {
      // One attempt: a second pod would run the legs again under the same run.
      backoffLimit: 0,
      // The service closes the run timed_out and deletes the Job at the deadline; a minute later
      // Kubernetes ends it anyway (a service that went away).
      activeDeadlineSeconds: Math.max(1, Math.ceil(spec.timeoutMs / 1000)) + DEADLINE_GRACE_S,
      ttlSecondsAfterFinished: opts.ttlSecondsAfterFinished,
      suspend,
      template: {
        metadata: { labels: labels(spec) },
        spec: {
          restartPolicy: 'Never',
          // The runner talks to svc's service, never to the cluster's API.
          automountServiceAccountToken: false,
          // A user namespace: the pod's root is no root of the node. A cluster without the feature
          // (UserNamespacesSupport) refuses the pod; docs/hosted.md says what to do then.
          hostUsers: false,
          // Root, so svc can run each agent as a pool uid of the image's range (SVC_AGENT_USER in
          // the image's environment); the agents never get the credential's file or root's state.
          securityContext: {
            runAsNonRoot: false,
            runAsUser: 0,
            runAsGroup: 0,
            seccompProfile: { type: 'RuntimeDefault' },
          },
          containers: [
            {
              name: 'runner',
              image: spec.image,
              args: spec.args,
              env: [
                { name: 'SVC_BASE_URL', value: spec.baseUrl },
                { name: 'SVC_RUN_ID', value: spec.runId },
                { name: 'SVC_RUN_TOKEN_FILE', value: `${SECRET_DIR}/${SECRET_FILE}` },
              ],
              securityContext: {
                runAsNonRoot: false,
                runAsUser: 0,
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                capabilities: { drop: ['ALL'], add: [...RUNNER_CAPABILITIES] },
              },
              ...(Object.keys(resources).length ? { resources } : {}),
              // The root file system is read-only: the clones, svc's state and temp files go here.
              volumeMounts: [
                { name: 'work', mountPath: '/work' },
                { name: 'home', mountPath: '/home/svc' },
                { name: 'tmp', mountPath: '/tmp' },
                { name: 'run-token', mountPath: SECRET_DIR, readOnly: true },
              ],
            },
          ],
          volumes: [
            ...scratch.map((name) => ({ name, emptyDir: {} })),
            {
              name: 'run-token',
              secret: { secretName: spec.name, defaultMode: SECRET_MODE, items: [{ key: SECRET_KEY, path: SECRET_FILE, mode: SECRET_MODE }] },
            },
          ],
        },
      },
    },
  };
}

/** The Secret of the run's credential, owned by the Job `owner` (its uid is known once created). */
export function secretManifest(spec: RunnerSpec, opts: KubernetesRunnerOptions, credential: string, owner: { uid: string }) {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: spec.name,
      namespace: opts.namespace,
      labels: labels(spec),
      ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: spec.name, uid: owner.uid }],
    },
    type: 'Opaque',
    immutable: true,
    stringData: { [SECRET_KEY]: credential },
  };
}
