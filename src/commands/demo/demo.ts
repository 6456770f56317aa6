// `svc demo`: a whole dispatch run with nothing set up. It starts the local service in-process with
// the demo seed, makes a throwaway git repository, and runs `svc next` with a scripted agent, so a
// newcomer sees selection, worktrees, legs, events, the close-out prompt and the close end to end.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createApiClient } from '../../api/client.js';
import { defaultDispatchOptions, loadEngine, startDispatch } from '../../dispatch/index.js';
import { printRunSummary } from '../../ui/run-progress.js';
import type { Context } from '../context.js';
import { runUnderProgress } from '../dispatch/engine-tail.js';
import { gitMissing } from '../dispatch/preflight.js';
import { howToRun } from './how-to-run.js';

/** The package's own folder, found from this module whether it runs bundled (dist/) or from src/. */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'examples', 'demo-agent.mjs'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('the demo agent (examples/demo-agent.mjs) is missing from this installation');
    dir = up;
  }
  return dir;
}

/** A small workflow (docs/workflow.md), so a first run shows setup, a port and the check at work. */
const DEMO_WORKFLOW = `# svc reads this from the base commit before every run (docs/workflow.md).
setup: echo "worktree of $SVC_CARD_KEY ready; its own port is $SVC_PORT"
ports: 1
verify: test -s "notes/$SVC_CARD_KEY.md" && echo "check passed, notes/$SVC_CARD_KEY.md is there"
prompt: Keep each change to one note under notes/.
`;

async function makeDemoRepo(): Promise<string> {
  const { ownCommitArgs, gitRun } = await loadEngine();
  const repo = mkdtempSync(join(tmpdir(), 'svc-demo-repo-'));
  const git = (...args: string[]) => gitRun(repo, args);
  await git('init', '-q', '-b', 'main').catch((error: unknown) => {
    throw (error as { code?: string }).code === 'ENOENT' ? gitMissing() : error;
  });
  writeFileSync(join(repo, 'README.md'), '# Demo shop\n\nA repository the demo agent commits to.\n');
  mkdirSync(join(repo, '.svc'));
  writeFileSync(join(repo, '.svc', 'workflow.yml'), DEMO_WORKFLOW);
  await git('add', 'README.md', '.svc');
  await git(...ownCommitArgs('svc demo', 'demo@example.invalid', 'Initial commit'));
  return repo;
}

export interface DemoOptions {
  /** Keep the throwaway repository and state folder (their paths are printed) instead of removing them. */
  keep?: boolean;
}

export async function runDemo(opts: DemoOptions, ctx: Context): Promise<void> {
  const { startServer } = await import('../../server/index.js');
  const out = ctx.out;
  const service = await startServer({ port: 0, seed: 'demo' });
  const seeded = service.seeded!;
  // Not bound to the interrupt signal: after Ctrl-C the engine still flushes and closes the run.
  const api = createApiClient({ baseUrl: service.url, token: seeded.token, version: ctx.version });
  // The throwaway folders go when the demo ends (interrupted or not), unless --keep.
  const made: string[] = [];
  try {
    const repo = await makeDemoRepo();
    made.push(repo);
    const stateDir = mkdtempSync(join(tmpdir(), 'svc-demo-state-'));
    made.push(stateDir);
    const agent = join(packageRoot(), 'examples', 'demo-agent.mjs');
    out.info(out.style.bold(`Local service on ${service.url} with project ${seeded.projectKey}; repository ${repo}`));
    const { describeWorkflow, gitRun, loadWorkflow } = await loadEngine();
    const { workflow } = await loadWorkflow(repo);
    out.info('Running `svc next` with a scripted demo agent: the next runnable container, leaf by leaf, blockers first.');
    out.info(`Its .svc/workflow.yml: ${workflow ? describeWorkflow(workflow) : 'none'} (each leg's log shows the steps).\n`);

    ctx.interrupts.handle?.('dispatch');
    const defaults = defaultDispatchOptions();
    const options = {
      ...defaults,
      command: 'next' as const,
      keys: [],
      projectKey: seeded.projectKey,
      baseUrl: service.url,
      repo,
      agent: { agentCmd: `"${ctx.self.execPath}" "${agent}" {prompt_file}` },
      sendLogs: true,
      // The scripted agent answers in a second: a hung one is stopped sooner than a real agent would be.
      timeouts: { ...defaults.timeouts, idleMs: 60_000, cardMs: 120_000, killGraceMs: 2_000 },
      secrets: [seeded.token],
      env: ctx.env,
      workflow,
    };
    const summary = await runUnderProgress(ctx, (progress) =>
      startDispatch(options, { client: api, stateDir, output: progress, signal: ctx.interrupts.signal }),
    );

    if (ctx.out.json) {
      const run = summary.runId ? await api.getDispatchRun(summary.runId) : null;
      return ctx.out.document({ summary, run, repo, stateDir });
    }
    printRunSummary(out, summary);
    if (summary.runId) {
      const run = await api.getDispatchRun(summary.runId);
      const branches = (await gitRun(repo, ['branch', '--list', 'svc/*'])).trimEnd();
      out.info('');
      out.info(`The service recorded run ${run.id}: ${run.status}, ${run.stopReason}, ${run.seq} events.`);
      out.info(`Branches the agent committed on:\n${branches}`);
      if (opts.keep) out.info(`Agent logs: ${join(stateDir, 'runs', run.id, 'logs')}`);
      else out.info("The demo's repository and state folder are removed now; `svc demo --keep` keeps them to look at.");
      const svc = howToRun(ctx.env, process.argv[1] ?? 'svc');
      out.info(`\nNext: \`${svc} server --db svc.db --seed demo\` keeps a service running; \`${svc} server done KEY --db svc.db\``);
      out.info('marks a card done there, so the cards it blocked become ready (a run never moves a status). See README.md.');
    }
  } finally {
    await api.close();
    await service.close();
    if (!opts.keep) for (const dir of made) rmSync(dir, { recursive: true, force: true, maxRetries: 2 });
  }
}
