// `svc server --hosted-executor kubernetes` against a recording fake API server (fake-kube-api.ts),
// through @kubernetes/client-node and a kubeconfig naming it: one batch/v1 Job per hosted run and a
// Secret owned by it, what the wire carried, how a Job's end is recorded and the run closed, and the
// engine's refusals in one line. The manifests are checked against Kubernetes' published schema:
// the validators kubernetes-models generates from the OpenAPI document, and, for fields the schema
// does not close (it allows unknown ones; a strict API server refuses them), the field lists
// @kubernetes/client-node generates from the same document.
import * as k8s from '@kubernetes/client-node';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { Secret } from 'kubernetes-models/v1/Secret';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { jobManifest, secretManifest } from '../../../src/server/hosted-executor/manifests.js';
import { RUNNER_CAPABILITIES } from '../../../src/server/hosted-executor/types.js';
import { isolatedEnv, type CliEnv } from '../../support/cli.js';
import { startSvc, svcInProcess, type InProcessRun } from '../../support/svc-in-process.js';
import { startFakeKubeApi, type FakeKubeApi } from './fake-kube-api.js';

const RUN_TOKEN_SHAPE = /svc_run_[A-Za-z0-9]{8,}/;

/** Field names the generated client knows for `type`, recursively: what a strict API server accepts. */
function unknownFields(value: unknown, type: string, at = ''): string[] {
  const list = /^Array<(.+)>$/.exec(type);
  if (list) return Array.isArray(value) ? value.flatMap((v, i) => unknownFields(v, list[1]!, `${at}[${i}]`)) : [`${at} is not a list`];
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map) return value && typeof value === 'object' ? Object.entries(value).flatMap(([k, v]) => unknownFields(v, map[1]!, `${at}.${k}`)) : [];
  const model = (k8s as unknown as Record<string, { getAttributeTypeMap?: () => Array<{ baseName: string; type: string }> }>)[type];
  if (!model?.getAttributeTypeMap) return [];
  const attrs = model.getAttributeTypeMap();
  return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) => {
    const attr = attrs.find((a) => a.baseName === k);
    return attr ? unknownFields(v, attr.type, `${at}.${k}`) : [`${at}.${k}`];
  });
}

/** Both checks; throws with the schema's words. */
function validate(manifest: any): void {
  if (manifest.kind === 'Job') new Job(manifest).validate();
  else new Secret(manifest).validate();
  const unknown = unknownFields(manifest, manifest.kind === 'Job' ? 'V1Job' : 'V1Secret');
  if (unknown.length) throw new Error(`fields unknown to ${manifest.kind}: ${unknown.join(', ')}`);
}

/**
 * The runner's pod as docs/hosted.md wants it: svc as root (in a user namespace) with only the
 * boundary's and the fence's capabilities, in the pod's own network, no service account token, no privilege escalation, the default seccomp
 * profile, and the credential only as a file of the Secret, readable by root alone.
 */
function expectRunnerPod(job: any, name: string, runId: string, baseUrl: string): void {
  const pod = job.spec.template.spec;
  expect(pod).toMatchObject({ restartPolicy: 'Never', automountServiceAccountToken: false, hostUsers: false });
  expect(pod.securityContext).toEqual({ runAsNonRoot: false, runAsUser: 0, runAsGroup: 0, seccompProfile: { type: 'RuntimeDefault' } });
  const container = pod.containers[0];
  expect(container.securityContext).toEqual({
    runAsNonRoot: false,
    runAsUser: 0,
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    // NET_ADMIN: svc fences each leg with nftables rules, in the pod's network namespace.
    capabilities: { drop: ['ALL'], add: ['CHOWN', 'DAC_OVERRIDE', 'KILL', 'NET_ADMIN', 'SETGID', 'SETUID'] },
  });
  expect([...RUNNER_CAPABILITIES]).toEqual(container.securityContext.capabilities.add);
  // The pod's own network, never the node's: rules made there would be the node's firewall.
  expect(pod.hostNetwork).toBeUndefined();
  // No credential in the environment: the entry point reads the Secret's file.
  expect(container.env).toEqual([
    { name: 'SVC_BASE_URL', value: baseUrl },
    { name: 'SVC_RUN_ID', value: runId },
    { name: 'SVC_RUN_TOKEN_FILE', value: '/run/secrets/svc-run-token' },
  ]);
  expect(container.volumeMounts).toContainEqual({ name: 'run-token', mountPath: '/run/secrets', readOnly: true });
  expect(pod.volumes).toContainEqual({
    name: 'run-token',
    secret: { secretName: name, defaultMode: 0o400, items: [{ key: 'token', path: 'svc-run-token', mode: 0o400 }] },
  });
  // fsGroup would give the Secret's file to a group; nothing may set a uid range for the agents here.
  expect(pod.securityContext.fsGroup).toBeUndefined();
  expect(JSON.stringify(pod)).not.toMatch(/SVC_AGENT_USER|10001/);
}

let api: FakeKubeApi;
let dir: string;
let kubeconfig: string;
let server: InProcessRun;
let url: string;
let token: string;
let personal: CliEnv;
const logs = () => join(dir, 'runners');

/** `svc server … ARGS` in this process, once its URL and token are printed. */
async function serve(args: string[]): Promise<InProcessRun> {
  const run = startSvc(['server', '--port', '0', '--seed', 'demo', ...args]);
  const deadline = Date.now() + 15_000;
  while (run.stdout.text.split('\n').length < 3) {
    const ended = await Promise.race([run.done.then(() => true), new Promise((r) => setTimeout(() => r(false), 10))]);
    if (ended || Date.now() > deadline) throw new Error(`svc server did not start: ${run.stderr.text}`);
  }
  return run;
}

async function call(method: string, path: string, bearer: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${url}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${bearer}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function openHosted(title: string): Promise<string> {
  const made = await call('POST', '/projects/DEMO/work-items', token, { kind: 'task', type: 'code', title, targetRepositories: ['acme/widgets'] });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  const opened = await svcInProcess(['run', (made.body.item ?? made.body).key, '--hosted', '--json'], { env: personal });
  expect(opened.code, opened.stderr).toBe(0);
  return (JSON.parse(opened.stdout) as { run: { id: string } }).run.id;
}

/** The Job and Secret the executor created for `runId`, once the Job was let go. */
async function created(runId: string) {
  const posted = await until(`the Job of ${runId}`, async () => {
    const job = api.requests.find((r) => r.method === 'POST' && r.path.endsWith('/jobs') && r.body.metadata.labels['svc-cli/run-id'] === runId);
    const patched = job && api.requests.find((r) => r.method === 'PATCH' && r.path.endsWith(`/jobs/${job.body.metadata.name}`));
    return patched ? job : undefined;
  });
  const name = posted.body.metadata.name as string;
  const secret = api.requests.find((r) => r.method === 'POST' && r.path.endsWith('/secrets') && r.body.metadata.name === name)!;
  return { name, job: posted, secret };
}

const runOf = async (runId: string) => (await call('GET', `/dispatch-runs/${runId}`, token)).body;
const closedRun = (runId: string) =>
  until(`${runId} closed with its runner recorded`, async () => {
    const run = await runOf(runId);
    return run.status !== 'running' && run.agentInstance?.endedAt ? run : undefined;
  });

beforeAll(async () => {
  api = await startFakeKubeApi();
  dir = mkdtempSync(join(tmpdir(), 'svc-kube-'));
  kubeconfig = api.kubeconfig(dir, 'runners');
  server = await serve([
    '--hosted-executor',
    'kubernetes',
    '--kubeconfig',
    kubeconfig,
    '--hosted-image',
    'registry.example/svc:1',
    '--hosted-agent-cmd',
    'sh agent.sh {key}',
    '--hosted-timeout',
    '30m',
    '--hosted-requests',
    'cpu=250m,memory=256Mi',
    '--hosted-limits',
    'cpu=1,memory=1Gi',
    '--hosted-poll',
    '50ms',
    '--hosted-logs',
    logs(),
    '--hosted-base-url',
    'http://svc.example:8787',
  ]);
  [url, token] = server.stdout.text.split('\n') as [string, string];
  personal = isolatedEnv({ SVC_BASE_URL: url, SVC_TOKEN: token, SVC_PROJECT: 'DEMO' });
}, 30_000);

afterAll(async () => {
  server?.context()?.abort.abort('SIGTERM');
  await server?.done;
  await api?.close();
});

describe('svc server --hosted-executor kubernetes (recording fake API server)', () => {
  it('creates one suspended Job, then its Secret owned by it, then lets the Job go; the credential is only in the Secret', async () => {
    const runId = await openHosted('Runs on a cluster');
    const { name, job, secret } = await created(runId);
    const calls = api.requests.filter((r) => r.path.includes(name) || r.body?.metadata?.name === name).map((r) => `${r.method} ${r.path}`);
    expect(calls.slice(0, 3)).toEqual([
      'POST /apis/batch/v1/namespaces/runners/jobs',
      'POST /api/v1/namespaces/runners/secrets',
      `PATCH /apis/batch/v1/namespaces/runners/jobs/${name}`,
    ]);
    expect(api.requests.find((r) => r.method === 'PATCH')!.headers['content-type']).toBe('application/merge-patch+json');
    expect(api.requests.every((r) => r.headers.authorization === 'Bearer fake-kube-bearer')).toBe(true);

    const spec = job.body.spec;
    expect(spec).toMatchObject({ backoffLimit: 0, activeDeadlineSeconds: 1860, ttlSecondsAfterFinished: 3600, suspend: true });
    expectRunnerPod(job.body, name, runId, 'http://svc.example:8787');
    expect(spec.template.spec.containers[0]).toMatchObject({
      image: 'registry.example/svc:1',
      args: ['attach', '--agent-cmd', 'sh agent.sh {key}'],
      resources: { requests: { cpu: '250m', memory: '256Mi' }, limits: { cpu: '1', memory: '1Gi' } },
    });
    // The Secret is owned by the Job just created, and holds the run's live credential.
    const jobUid = api.job(name).metadata.uid;
    expect(secret.body.metadata.ownerReferences).toEqual([{ apiVersion: 'batch/v1', kind: 'Job', name, uid: jobUid }]);
    const credential = secret.body.stringData.token as string;
    expect(credential).toMatch(/^svc_run_/);
    expect((await call('GET', `/dispatch-runs/${runId}`, credential)).status).toBe(200);
    // Nowhere else: no other request, no plain value of the Job, not the server's output.
    for (const r of api.requests.filter((x) => x !== secret)) expect(JSON.stringify(r.body ?? '')).not.toContain(credential);
    expect(server.stdout.text + server.stderr.text).not.toMatch(RUN_TOKEN_SHAPE);

    for (const manifest of [job.body, secret.body]) expect(() => validate(manifest)).not.toThrow();
    // The runner closes its run, then its pod ends 0: the run stays as the runner closed it.
    expect((await call('POST', `/dispatch-runs/${runId}/close`, credential, { stopReason: 'completed', status: 'succeeded' })).status).toBe(200);
    api.finish(name, { succeeded: true, exitCode: 0, log: 'run closed completed\n' });
    const run = await closedRun(runId);
    expect(run).toMatchObject({ status: 'succeeded', stopReason: 'completed' });
    expect(run.agentInstance).toMatchObject({ engine: 'kubernetes', name, state: 'exited', exitCode: 0, logs: join(logs(), `${runId}.log`) });
    expect(readFileSync(run.agentInstance.logs, 'utf8')).toBe('run closed completed\n');
  });

  it("a Job that fails before its run is closed: the run is closed failed with the pod's exit and log kept", async () => {
    const runId = await openHosted('Fails on the cluster');
    const { name } = await created(runId);
    api.finish(name, { succeeded: false, exitCode: 3, log: 'svc: cannot reach http://svc.example:8787\n', reason: 'BackoffLimitExceeded' });
    const run = await closedRun(runId);
    expect(run).toMatchObject({ status: 'failed', stopReason: 'abandoned' });
    expect(run.cards.map((c: { disposition: string }) => c.disposition)).toEqual(['not_reached']);
    expect(run.agentInstance).toMatchObject({
      state: 'exited',
      exitCode: 3,
      error: 'kubernetes: Job failed: BackoffLimitExceeded Job ended: BackoffLimitExceeded',
    });
    expect(readFileSync(run.agentInstance.logs, 'utf8')).toContain('cannot reach');
    expect(server.stderr.text).toContain(`runner of ${runId} ended without closing its run`);
  });

  it("a Job ended by Kubernetes' deadline (the backstop): the run is closed timed_out", async () => {
    const runId = await openHosted('Too slow for the cluster');
    const { name } = await created(runId);
    api.finish(name, { succeeded: false, exitCode: 143, log: '', reason: 'DeadlineExceeded' });
    const run = await closedRun(runId);
    expect(run).toMatchObject({ status: 'timed_out' });
    expect(run.agentInstance).toMatchObject({ state: 'timed out', exitCode: 143 });
  });

  it('an API server refusing the Job: the run is closed failed, the refusal named in one line', async () => {
    api.refuse('POST', /\/jobs$/, 403, 'jobs.batch is forbidden: User "svc" cannot create resource "jobs" in API group "batch" in the namespace "runners"');
    const runId = await openHosted('Refused by the cluster');
    const run = await closedRun(runId);
    expect(run).toMatchObject({ status: 'failed' });
    expect(run.agentInstance).toMatchObject({ state: 'failed to start', exitCode: null });
    expect(run.agentInstance.error).toBe(
      'kubernetes: 403 jobs.batch is forbidden: User "svc" cannot create resource "jobs" in API group "batch" in the namespace "runners"',
    );
    expect(server.stderr.text).toContain(`svc server: runner of ${runId} did not start: kubernetes: 403 jobs.batch is forbidden`);
  });

  it('the schema check fails a manifest Kubernetes would refuse (a wrong type, a misspelt field)', () => {
    const spec = { runId: 'run_x', name: 'svc-run-x', image: 'i', baseUrl: 'http://h', args: ['attach'], timeoutMs: 60_000 };
    const opts = { namespace: 'n', ttlSecondsAfterFinished: 60 };
    const good = jobManifest(spec, opts, false);
    expect(() => validate(good)).not.toThrow();
    expect(() => validate(secretManifest(spec, opts, 'c', { uid: 'u' }))).not.toThrow();
    expect(() => validate({ ...good, spec: { ...good.spec, backoffLimit: '0' } })).toThrow(/backoffLimit must be integer/);
    expect(() => validate({ ...good, spec: { ...good.spec, backofLimit: 0 } })).toThrow('fields unknown to Job: .spec.backofLimit');
  });
});

describe('svc server --hosted-executor kubernetes, refused or dry', () => {
  it('--dry-run prints the Job and Secret as YAML for each hosted run, mints no credential and creates nothing', async () => {
    const requestsBefore = api.requests.length;
    const dry = await serve(['--hosted-executor', 'kubernetes', '--kubeconfig', kubeconfig, '--hosted-image', 'svc:dry', '--dry-run']);
    const [dryUrl, dryToken] = dry.stdout.text.split('\n') as [string, string];
    try {
      const made = await fetch(`${dryUrl}/api/v1/projects/DEMO/work-items`, {
        method: 'POST',
        headers: { authorization: `Bearer ${dryToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ kind: 'task', type: 'code', title: 'Dry', targetRepositories: ['acme/widgets'] }),
      }).then((r) => r.json() as Promise<{ key: string }>);
      const opened = await svcInProcess(['run', made.key, '--hosted', '--json'], { env: isolatedEnv({ SVC_BASE_URL: dryUrl, SVC_TOKEN: dryToken }) });
      expect(opened.code, opened.stderr).toBe(0);
      const runId = JSON.parse(opened.stdout).run.id as string;
      const printed = await until('the manifests', async () => (dry.stdout.text.includes('kind: Secret') ? dry.stdout.text : undefined));
      const docs = parseAllDocuments(printed.split('\n').slice(2).join('\n')).map((d) => d.toJSON());
      expect(docs.map((d) => d.kind)).toEqual(['Job', 'Secret']);
      // What --dry-run prints is what the cluster is asked for: the same pod, schema-valid.
      expectRunnerPod(docs[0], docs[0].metadata.name, runId, dryUrl);
      for (const manifest of docs) expect(() => validate(manifest)).not.toThrow();
      expect(docs[0].spec).toMatchObject({ backoffLimit: 0, activeDeadlineSeconds: 3660, suspend: false });
      expect(docs[0].metadata.labels['svc-cli/run-id']).toBe(runId);
      expect(docs[1].stringData.token).toMatch(/^<the run credential/);
      expect(printed).not.toMatch(RUN_TOKEN_SHAPE);
      expect(dry.stderr.text).toContain('dry run: printing what each would start');
      expect(api.requests.length).toBe(requestsBefore);
      const run = await fetch(`${dryUrl}/api/v1/dispatch-runs/${runId}`, { headers: { authorization: `Bearer ${dryToken}` } }).then(
        (r) => r.json() as Promise<any>,
      );
      expect(run).toMatchObject({ status: 'running', agentInstance: { engine: 'kubernetes', state: 'dry run' } });
    } finally {
      dry.context()?.abort.abort('SIGTERM');
      await dry.done;
    }
  });

  it.each([
    ["an API server that refuses the kubeconfig's user", 'wrong-token', 'svc: kubernetes: 401 Unauthorized'],
    ['an unreadable kubeconfig', 'missing-file', 'svc: kubernetes: cannot read the kubeconfig: ENOENT'],
  ])('%s: svc server exits 2 with one line naming it', async (_, mode, line) => {
    let config = join(dir, 'nope');
    if (mode === 'wrong-token') {
      const other = mkdtempSync(join(tmpdir(), 'svc-kube-bad-'));
      config = api.kubeconfig(other);
      const text = readFileSync(config, 'utf8').replace('fake-kube-bearer', 'not-the-token');
      writeFileSync(config, text);
    }
    expect(existsSync(config)).toBe(mode === 'wrong-token');
    const r = await svcInProcess(['server', '--port', '0', '--hosted-executor', 'kubernetes', '--kubeconfig', config]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(line);
  });
});
