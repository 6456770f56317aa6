// What each engine does with a ready-made fleet's file before its shell runs, done the way the
// engine does it, so the test runs the template's own commands as written: GitHub Actions' `run:`
// steps with its `${{ }}` expressions evaluated (an expression the table below does not know fails
// the test), GitLab's `before_script:` and `script:`, Buildkite's `commands:` after its upload-time
// interpolation (`$$` → `$`), and the Kubernetes container's `command:` and `args:`, with each
// engine's own variables, its checkout and its mounts. What a worker needs but this machine cannot
// have is a stand-in the test provides (the agent CLI, npm's registry, buildkite-agent).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

const ROOT = join(import.meta.dirname, '..', '..');
const load = (path: string) => parse(readFileSync(join(ROOT, path), 'utf8'));

/** One shell the engine starts, in order: `argv` gets the script as its last argument. */
export interface Shell {
  argv: string[];
  script: string;
  env: Record<string, string>;
}

/** One worker of a fleet as its engine would start it. */
export interface Plan {
  /** The engine's checkout of `origin` into the workspace, or null when the commands clone. */
  checkout: { remote: string } | null;
  workspace: string;
  shells: Shell[];
  /** Files the engine mounts (Kubernetes' Secret volume): path → [content, mode]. */
  mounts: Record<string, [string, number]>;
}

/** What the fleet's owner fills in (each template's comment block says so) and the worker's place. */
export interface Site {
  index: number;
  serviceUrl: string;
  project: string;
  /** `file://…/acme/shop.git`: origin, a bare repository whose URL is the server's and the path. */
  serverUrl: string;
  projectPath: string;
  secrets: Record<string, string>;
  /** The worker's own folder: workspace, HOME and mounts go below it. */
  dir: string;
  basics: Record<string, string>;
}

const settings = (site: Site): Record<string, string> => ({ SVC_BASE_URL: site.serviceUrl, SVC_PROJECT: site.project });
const originUrl = (site: Site) => `${site.serverUrl}/${site.projectPath}.git`;

/** GitHub's `${{ }}`: the expressions the workflow may use, and their values in this job. */
function expressions(site: Site): Record<string, string> {
  return {
    'secrets.SVC_TOKEN': site.secrets.SVC_TOKEN!,
    'secrets.ANTHROPIC_API_KEY': site.secrets.ANTHROPIC_API_KEY!,
    'github.token': site.secrets.GITHUB_TOKEN!,
    "github.event.inputs.max || '20'": '20',
    'matrix.worker': String(site.index + 1),
  };
}

function evaluate(text: string, site: Site): string {
  const table = expressions(site);
  return text.replace(/\$\{\{\s*(.+?)\s*\}\}/g, (_, expr: string) => {
    const value = table[expr];
    if (value === undefined) throw new Error(`the test does not know the expression \${{ ${expr} }}`);
    return value;
  });
}

export function github(site: Site): Plan & { uses: string[] } {
  const wf = load('examples/ci/github-actions.yml');
  const job = wf.jobs.worker;
  const workspace = join(site.dir, 'work');
  const engine = {
    CI: 'true',
    GITHUB_ACTIONS: 'true',
    GITHUB_WORKSPACE: workspace,
    GITHUB_RUN_ID: '4242',
    GITHUB_STEP_SUMMARY: join(site.dir, 'step-summary.md'),
    // The runner's own token is in its environment, not in the steps' (only `github.token` is).
  };
  const jobEnv = { ...site.basics, ...engine, ...evalEnv(job.env, site), ...settings(site) };
  const shells: Shell[] = [];
  const uses: string[] = [];
  for (const step of job.steps as { uses?: string; run?: string; env?: Record<string, string> }[]) {
    if (step.uses) uses.push(step.uses);
    if (step.run === undefined) continue;
    // `bash -e {0}`, GitHub's default shell, with the script's text as the job's file.
    shells.push({ argv: ['bash', '-e', '-c'], script: evaluate(step.run, site), env: { ...jobEnv, ...evalEnv(step.env ?? {}, site) } });
  }
  return { checkout: { remote: originUrl(site) }, workspace, shells, mounts: {}, uses };
}

function evalEnv(env: Record<string, string | number>, site: Site): Record<string, string> {
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, evaluate(String(v), site)]));
}

export function gitlab(site: Site): Plan {
  const doc = load('examples/ci/gitlab-ci.yml');
  const job = doc['svc-fleet'];
  const workspace = join(site.dir, 'builds', site.projectPath);
  const env = {
    ...site.basics,
    // CI/CD variables (masked) are the job's environment, every script of it.
    SVC_TOKEN: site.secrets.SVC_TOKEN!,
    ANTHROPIC_API_KEY: site.secrets.ANTHROPIC_API_KEY!,
    SVC_GIT_TOKEN: site.secrets.SVC_GIT_TOKEN!,
    CI: 'true',
    GITLAB_CI: 'true',
    CI_JOB_TOKEN: site.secrets.CI_JOB_TOKEN!,
    CI_NODE_INDEX: String(site.index + 1),
    CI_NODE_TOTAL: String(job.parallel),
    CI_PIPELINE_ID: '777',
    CI_PROJECT_DIR: workspace,
    CI_PROJECT_PATH: site.projectPath,
    CI_SERVER_URL: site.serverUrl,
    ...(doc.variables ?? {}),
    ...job.variables,
    ...settings(site),
  };
  const lines = [...job.before_script, ...job.script] as string[];
  return {
    checkout: { remote: originUrl(site) },
    workspace,
    shells: [{ argv: ['bash', '-e', '-o', 'pipefail', '-c'], script: lines.join('\n'), env }],
    mounts: {},
  };
}

/** The URL GitLab's runner leaves as origin: its job token inside (the template must take it out). */
export const gitlabCloneUrl = (site: Site) => `https://gitlab-ci-token:${site.secrets.CI_JOB_TOKEN}@gitlab.invalid/${site.projectPath}.git`;

/** The URL Buildkite's checkout leaves as origin: the deploy key's ssh (the template sets https). */
export const buildkiteCloneUrl = (site: Site) => `git@git.invalid:${site.projectPath}.git`;

export function buildkite(site: Site): Plan & { plugins: unknown[] } {
  const doc = load('examples/ci/buildkite.yml');
  const step = doc.steps[0];
  const workspace = join(site.dir, 'builds', 'shop');
  const upload = (line: string) => {
    // Buildkite interpolates `$VAR` at upload, from the pipeline's env: the template uses none.
    if (/\$(?!\$)/.test(line.replace(/\$\$/g, ''))) throw new Error(`an upload-time variable in: ${line}`);
    return line.replace(/\$\$/g, '$');
  };
  const env = {
    ...site.basics,
    BUILDKITE: 'true',
    CI: 'true',
    BUILDKITE_AGENT_ACCESS_TOKEN: site.secrets.BUILDKITE_AGENT_ACCESS_TOKEN!,
    BUILDKITE_BUILD_ID: '0190aaaa-bbbb-cccc-dddd-eeeeffff0000',
    BUILDKITE_PARALLEL_JOB: String(site.index),
    BUILDKITE_PARALLEL_JOB_COUNT: String(step.parallelism),
    BUILDKITE_BUILD_CHECKOUT_PATH: workspace,
    BUILDKITE_REPO: originUrl(site),
    ...doc.env,
    ...(step.env ?? {}),
    ...settings(site),
    // The comment block: "set REPO_HTTPS_URL", the URL the push credential is for.
    REPO_HTTPS_URL: originUrl(site),
  };
  // The agent runs a step's commands as one script under `bash -e -c`.
  const script = (step.commands as string[]).map(upload).join('\n');
  return { checkout: { remote: originUrl(site) }, workspace, shells: [{ argv: ['bash', '-e', '-c'], script, env }], mounts: {}, plugins: step.plugins ?? [] };
}

export function kubernetes(site: Site): Plan & { podSpec: Record<string, unknown> } {
  const job = load('examples/kubernetes/svc-fleet-job.yaml');
  const pod = job.spec.template.spec;
  const container = pod.containers[0];
  // The kubelet's mounts: each volumeMount's path, here a folder of the worker's own.
  const paths = new Map<string, string>();
  const mounts: Record<string, [string, number]> = {};
  for (const m of (container.volumeMounts ?? []) as { name: string; mountPath: string }[]) {
    const here = join(site.dir, 'mounts', m.name);
    paths.set(m.mountPath, here);
    const volume = pod.volumes.find((v: { name: string }) => v.name === m.name);
    for (const item of volume.secret?.items ?? []) mounts[join(here, item.path)] = [site.secrets[item.key]!, volume.secret.defaultMode];
  }
  const mounted = (text: string) => [...paths].sort((a, b) => b[0].length - a[0].length).reduce((t, [from, to]) => t.split(from).join(to), text);
  const env: Record<string, string> = { ...site.basics, JOB_COMPLETION_INDEX: String(site.index) };
  for (const e of container.env as { name: string; value?: string; valueFrom?: Record<string, { key?: string; fieldPath?: string }> }[]) {
    const from = e.valueFrom;
    env[e.name] = from?.secretKeyRef ? site.secrets[from.secretKeyRef.key!]! : from?.fieldRef ? 'job-uid-5150' : String(e.value);
  }
  Object.assign(env, settings(site), { REPO_URL: originUrl(site) });
  const [shell, ...flags] = container.command as string[];
  return {
    checkout: null,
    workspace: mounted(container.workingDir),
    shells: [{ argv: [shell!, ...flags], script: mounted(container.args[0]), env }],
    mounts,
    podSpec: pod,
  };
}
