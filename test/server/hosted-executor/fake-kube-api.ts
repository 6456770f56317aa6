// A recording stand-in for a Kubernetes API server on loopback (node:http): just the calls the
// hosted executor makes (Jobs, Secrets, Pods, their log), each recorded with its method, path,
// headers and body so tests assert on the wire. A test ends a Job with `finish()`, as a cluster
// would once the pod exits; `refuse()` makes the next call of a kind answer as an API server
// refusing it (a Status body).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Recorded {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: any;
}

interface JobState {
  job: any;
  end?: { succeeded: boolean; exitCode: number; log: string; reason?: string };
}

export interface FakeKubeApi {
  url: string;
  requests: Recorded[];
  /** A kubeconfig file naming this server, with a bearer token, in `dir`. */
  kubeconfig(dir: string, namespace?: string): string;
  /** The Job as created (and patched). */
  job(name: string): any;
  finish(name: string, end: JobState['end']): void;
  /** The next request whose `method path` matches answers `status` with a Status of `message`. */
  refuse(method: string, pathPattern: RegExp, status: number, message: string): void;
  close(): Promise<void>;
}

export const FAKE_KUBE_TOKEN = 'fake-kube-bearer';

export async function startFakeKubeApi(): Promise<FakeKubeApi> {
  const requests: Recorded[] = [];
  const jobs = new Map<string, JobState>();
  const refusals: Array<{ method: string; pattern: RegExp; status: number; message: string }> = [];

  const send = (res: ServerResponse, status: number, body: unknown, type = 'application/json') => {
    res.writeHead(status, { 'content-type': type });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  };
  const status = (code: number, message: string) => ({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, code });

  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://x');
    const rec: Recorded = { method: req.method ?? '', path: url.pathname, query: url.searchParams, headers: req.headers, body: text ? JSON.parse(text) : null };
    requests.push(rec);
    const refusal = refusals.findIndex((r) => r.method === rec.method && r.pattern.test(rec.path));
    if (refusal >= 0) {
      const [r] = refusals.splice(refusal, 1);
      return send(res, r!.status, status(r!.status, r!.message));
    }
    if (req.headers.authorization !== `Bearer ${FAKE_KUBE_TOKEN}`) return send(res, 401, status(401, 'Unauthorized'));
    let m: RegExpExecArray | null;
    if ((m = /^\/apis\/batch\/v1\/namespaces\/([^/]+)\/jobs$/.exec(rec.path))) {
      if (rec.method === 'GET') return send(res, 200, { kind: 'JobList', apiVersion: 'batch/v1', metadata: {}, items: [] });
      if (rec.method === 'POST') {
        const job = {
          ...rec.body,
          metadata: { ...rec.body.metadata, namespace: m[1], uid: randomUUID(), creationTimestamp: new Date().toISOString() },
          status: {},
        };
        jobs.set(job.metadata.name, { job });
        return send(res, 201, job);
      }
    }
    if ((m = /^\/apis\/batch\/v1\/namespaces\/[^/]+\/jobs\/([^/]+)(\/status)?$/.exec(rec.path))) {
      const state = jobs.get(m[1]!);
      if (!state) return send(res, 404, status(404, `jobs.batch "${m[1]}" not found`));
      if (rec.method === 'PATCH') {
        state.job.spec = { ...state.job.spec, ...rec.body.spec };
        return send(res, 200, state.job);
      }
      if (rec.method === 'DELETE') {
        jobs.delete(m[1]!);
        return send(res, 200, status(200, 'deleted'));
      }
      if (rec.method === 'GET') {
        const end = state.end;
        const conditions = !end
          ? []
          : [
              {
                type: end.succeeded ? 'Complete' : 'Failed',
                status: 'True',
                ...(end.reason ? { reason: end.reason, message: `Job ended: ${end.reason}` } : {}),
              },
            ];
        return send(res, 200, { ...state.job, status: end ? { ...(end.succeeded ? { succeeded: 1 } : { failed: 1 }), conditions } : { active: 1 } });
      }
    }
    if ((m = /^\/api\/v1\/namespaces\/([^/]+)\/secrets$/.exec(rec.path)) && rec.method === 'POST') {
      const { stringData: _hidden, ...rest } = rec.body;
      return send(res, 201, { ...rest, metadata: { ...rec.body.metadata, uid: randomUUID() } });
    }
    if ((m = /^\/api\/v1\/namespaces\/[^/]+\/pods$/.exec(rec.path)) && rec.method === 'GET') {
      const job = /^job-name=(.+)$/.exec(rec.query.get('labelSelector') ?? '')?.[1];
      const end = job ? jobs.get(job)?.end : undefined;
      const items = end
        ? [
            {
              metadata: { name: `${job}-pod1` },
              status: {
                containerStatuses: [
                  { name: 'runner', image: 'x', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: end.exitCode } } },
                ],
              },
            },
          ]
        : [];
      return send(res, 200, { kind: 'PodList', apiVersion: 'v1', metadata: {}, items });
    }
    if ((m = /^\/api\/v1\/namespaces\/[^/]+\/pods\/(.+)-pod1\/log$/.exec(rec.path)) && rec.method === 'GET') {
      return send(res, 200, jobs.get(m[1]!)?.end?.log ?? '', 'text/plain');
    }
    send(res, 404, status(404, `no route ${rec.method} ${rec.path}`));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    requests,
    kubeconfig(dir, namespace) {
      const file = join(dir, 'kubeconfig');
      const ns = namespace ? `\n    namespace: ${namespace}` : '';
      writeFileSync(
        file,
        `apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n    server: ${url}\n    insecure-skip-tls-verify: true\ncontexts:\n- name: fake\n  context:\n    cluster: fake\n    user: fake${ns}\ncurrent-context: fake\nusers:\n- name: fake\n  user:\n    token: ${FAKE_KUBE_TOKEN}\n`,
        { mode: 0o600 },
      );
      return file;
    },
    job: (name) => jobs.get(name)?.job,
    finish(name, end) {
      const state = jobs.get(name);
      if (!state) throw new Error(`no Job ${name}`);
      state.end = end;
    },
    refuse(method, pattern, code, message) {
      refusals.push({ method, pattern, status: code, message });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
