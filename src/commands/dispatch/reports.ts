// `--report FORMAT:FILE` on the dispatch commands: the specs are checked before anything runs (a
// typo must not cost a night of agents), and the reports are written from the local state once
// the run is over, together with the CI summary (step summary, Buildkite annotation).
import { rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { RunSummary } from '../../dispatch/lifecycle/types.js';
import { describeFsError, loadReports, makeDirs, resolveStateDir } from '../../dispatch/index.js';
import type { Context } from '../context.js';
import { EXIT, UsageError } from '../exit-codes.js';

export interface PlannedReport {
  format: 'junit' | 'markdown' | 'html' | 'json';
  file: string;
}

/** Parses every `--report`; a bad one is a usage error before the run opens. */
export async function planReports(specs: readonly string[] | undefined, ctx: Context): Promise<PlannedReport[]> {
  if (!specs?.length) return [];
  const { parseReportSpec } = await loadReports();
  try {
    const planned = specs.map((s) => parseReportSpec(s, ctx.cwd));
    if (ctx.out.json && planned.some((p) => p.file === '-'))
      throw new Error('--report FORMAT:- writes to stdout, which --json keeps for its one document; name a file');
    for (const p of planned) checkWritable(p.file);
    return planned;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/**
 * A report that could not be written would be found out after a night of agents: its folder is made
 * and a probe file written (then removed) now. Files that are not regular (/dev/stdout, a pipe) are
 * written through later and are not probed.
 */
function checkWritable(file: string): void {
  if (file === '-') return;
  const existing = statSync(file, { throwIfNoEntry: false });
  if (existing && !existing.isFile()) return;
  const probe = `${file}.${process.pid}.probe`;
  try {
    makeDirs(dirname(file));
    writeFileSync(probe, '', { flag: 'wx' });
    rmSync(probe);
  } catch (error) {
    throw new Error(`cannot write the report ${file}: ${describeFsError(error)}`);
  }
}

/** The runs a summary opened: one, or each of `auto`'s. */
function runIdsOf(summary: RunSummary): string[] {
  const ids = (summary.runs?.length ? summary.runs : [summary]).map((r) => r.runId);
  return [...new Set(ids.filter((id): id is string => Boolean(id)))];
}

/**
 * Writes the planned reports and the CI summary. A report that cannot be written is a warning and
 * exit 1 when the run itself succeeded: the run is closed and its state kept, so `svc runs report`
 * can make it again.
 */
export async function writeRunReports(ctx: Context, planned: readonly PlannedReport[], summary: RunSummary, secrets: readonly string[]): Promise<void> {
  const ids = runIdsOf(summary);
  const ci = ctx.env.GITHUB_STEP_SUMMARY || ctx.env.BUILDKITE;
  if (!planned.length && !(ci && ids.length)) return;
  const { buildRunReport, publishToCi, renderReport, writeReportFile } = await loadReports();
  const stateDir = resolveStateDir(ctx.env);
  const runs = [];
  for (const id of ids) {
    try {
      runs.push(await buildRunReport(stateDir, id, { secrets }));
    } catch (error) {
      ctx.out.warn(`no report for run ${id}: ${(error as Error).message}`);
    }
  }
  for (const p of planned) {
    try {
      writeReportFile(p.file, renderReport(p.format, runs), ctx.stdout);
      if (p.file !== '-') ctx.out.info(`${p.format} report: ${p.file}`);
    } catch (error) {
      ctx.out.warn(`svc: could not write the ${p.format} report ${p.file}: ${describeFsError(error)}`);
      if (ctx.exitCode === EXIT.ok) ctx.exitCode = EXIT.failed;
    }
  }
  for (const w of await publishToCi(runs, ctx.env)) ctx.out.warn(w);
}
