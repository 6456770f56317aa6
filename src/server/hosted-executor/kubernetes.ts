// Kubernetes: one batch/v1 Job per hosted run, through @kubernetes/client-node and the user's
// kubeconfig (KUBECONFIG, ~/.kube/config, or in-cluster). The Job is created suspended, then its
// Secret (owned by the Job, so it goes when the Job goes), then the Job is let go: its pod never
// starts before the Secret it reads exists. The Job is watched by polling its status; when it
// ends, the pod's exit code and log are kept (the log in the service's file, as for podman).
import { appendFileSync } from 'node:fs';
import { stringify } from 'yaml';
import { jobManifest, jobName, secretManifest, type KubernetesRunnerOptions } from './manifests.js';
import { HostedEngineError, type HostedEngine, type RunnerExit, type RunnerSpec } from './types.js';

type K8s = typeof import('@kubernetes/client-node');

export interface KubernetesEngineOptions extends Omit<KubernetesRunnerOptions, 'namespace'> {
  /** Default: the kubeconfig context's namespace, else `default`. */
  namespace?: string;
  /** A kubeconfig file; default KUBECONFIG, ~/.kube/config, or the in-cluster account. */
  kubeconfig?: string;
  /** How often a running Job's status is read, in ms. */
  pollMs: number;
}

/**
 * The API server's own message for a refused call, on one line: the Status body's `message`, else
 * the client's reason (`HTTP-Code: 401\nMessage: Unauthorized\n…` for statuses with no body).
 */
function apiError(error: unknown): string {
  const e = error as { code?: number; body?: unknown; message?: string };
  let body = e.body;
  if (typeof body === 'string') {
    try {
      body = JSON.parse(body);
    } catch {
      /* a plain text body is the message itself */
    }
  }
  const fromBody = body && typeof body === 'object' ? (body as { message?: unknown }).message : body;
  const reason = /\nMessage: (.*)/.exec(e.message ?? '')?.[1];
  const message = typeof fromBody === 'string' && fromBody.trim() ? fromBody : (reason ?? e.message ?? 'error');
  // A network failure is `fetch failed`; what failed is its cause (connect ECONNREFUSED 127.0.0.1:6443).
  const cause = (error as { cause?: { message?: string } }).cause?.message;
  return `kubernetes: ${typeof e.code === 'number' ? `${e.code} ` : ''}${message.split('\n')[0]}${cause ? ` (${cause.split('\n')[0]})` : ''}`;
}

export async function kubernetesEngine(opts: KubernetesEngineOptions): Promise<HostedEngine> {
  const k8s: K8s = await import('@kubernetes/client-node');
  const kc = new k8s.KubeConfig();
  try {
    if (opts.kubeconfig) kc.loadFromFile(opts.kubeconfig);
    else kc.loadFromDefault();
  } catch (error) {
    throw new HostedEngineError(`kubernetes: cannot read the kubeconfig: ${(error as Error).message.split('\n')[0]}`);
  }
  if (!kc.getCurrentCluster()) throw new HostedEngineError('kubernetes: the kubeconfig names no current cluster');
  const namespace = opts.namespace ?? kc.getContextObject(kc.getCurrentContext())?.namespace ?? 'default';
  const runner = { ...opts, namespace };
  const batch = kc.makeApiClient(k8s.BatchV1Api);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const mergePatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);

  /** The exit code of the Job's pod and its log, once the Job ended. */
  async function collect(spec: RunnerSpec, logFile: string): Promise<number | null> {
    const pods = await core.listNamespacedPod({ namespace, labelSelector: `job-name=${spec.name}` });
    const pod = pods.items[0];
    if (!pod?.metadata?.name) return null;
    const log = await core.readNamespacedPodLog({ name: pod.metadata.name, namespace, container: 'runner' }).catch(() => '');
    appendFileSync(logFile, typeof log === 'string' ? log : String(log), { mode: 0o600 });
    const state = pod.status?.containerStatuses?.find((c) => c.name === 'runner')?.state?.terminated;
    return state?.exitCode ?? null;
  }

  return {
    name: 'kubernetes',
    runnerName: jobName,

    async preflight() {
      try {
        await batch.listNamespacedJob({ namespace, limit: 1 });
      } catch (error) {
        throw new HostedEngineError(apiError(error));
      }
    },

    describe(spec) {
      const secret = secretManifest(spec, runner, '<the run credential, minted when the Job is created>', { uid: '<the Job uid>' });
      return [jobManifest(spec, runner, false), secret].map((m) => `---\n${stringify(m)}`).join('');
    },

    async start(spec, credential, logFile) {
      let uid: string | undefined;
      try {
        const job = await batch.createNamespacedJob({ namespace, body: jobManifest(spec, runner, true) });
        uid = job.metadata?.uid;
        if (!uid) throw new Error('the created Job has no uid');
        await core.createNamespacedSecret({ namespace, body: secretManifest(spec, runner, credential, { uid }) });
        await batch.patchNamespacedJob({ name: spec.name, namespace, body: { spec: { suspend: false } } }, mergePatch);
      } catch (error) {
        // A half-made runner is removed (the Secret goes with its Job).
        if (uid) await batch.deleteNamespacedJob({ name: spec.name, namespace, propagationPolicy: 'Background' }).catch(() => undefined);
        throw new HostedEngineError(apiError(error));
      }
      let stopped = false;
      const exited = (async (): Promise<RunnerExit> => {
        for (;;) {
          await new Promise((r) => setTimeout(r, opts.pollMs));
          let job: Awaited<ReturnType<typeof batch.readNamespacedJobStatus>>;
          try {
            job = await batch.readNamespacedJobStatus({ name: spec.name, namespace });
          } catch (error) {
            if ((error as { code?: number }).code === 404 || stopped)
              return { exitCode: null, error: stopped ? null : `${apiError(error)} (the Job is gone)`, timedOut: false };
            continue; // the API server may be briefly away; the Job goes on
          }
          const conditions = job.status?.conditions ?? [];
          const failed = conditions.find((c) => c.type === 'Failed' && c.status === 'True');
          const done =
            conditions.some((c) => c.type === 'Complete' && c.status === 'True') || failed || (job.status?.succeeded ?? 0) > 0 || (job.status?.failed ?? 0) > 0;
          if (!done) continue;
          const exitCode = await collect(spec, logFile).catch(() => null);
          const timedOut = failed?.reason === 'DeadlineExceeded';
          return { exitCode, error: failed && !timedOut ? `kubernetes: Job failed: ${failed.reason ?? ''} ${failed.message ?? ''}`.trim() : null, timedOut };
        }
      })();
      return {
        exited,
        async stop() {
          stopped = true;
          await batch.deleteNamespacedJob({ name: spec.name, namespace, propagationPolicy: 'Background' }).catch(() => undefined);
        },
      };
    },
  };
}
