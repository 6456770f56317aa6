// `svc runs report RUN... [--since 12h] --format F --output FILE`: a report made after the fact
// from this machine's local state only (run.json, journal, legs.jsonl, logs, git). No service call:
// a run recovered later, or reported on another day, reports the same.
import type { ReportFormat } from '../../dispatch/report/index.js';
import { extname } from 'node:path';
import { listRunRecords, loadReports, parseDuration, resolveStateDir } from '../../dispatch/index.js';
import type { Context } from '../context.js';
import { EXIT, UsageError } from '../exit-codes.js';
import type { RunsReportFlags } from './flags.js';

/** The flags of `svc runs report` (and the run ids), as its table in register.ts declares them. */
export type RunsReportOptions = RunsReportFlags & { runIds: string[] };

const BY_EXTENSION: Record<string, string> = { '.xml': 'junit', '.md': 'markdown', '.html': 'html', '.htm': 'html', '.json': 'json' };

export async function runRunsReport(opts: RunsReportOptions, ctx: Context): Promise<void> {
  const ids = opts.runIds;
  const report = await loadReports();
  const output = opts.output ?? '-';
  const named = opts.format ?? BY_EXTENSION[extname(output).toLowerCase()] ?? (ctx.out.json ? 'json' : undefined);
  if (!named) throw new UsageError(`--format is required (${report.REPORT_FORMATS.join(', ')}) unless --output ends in .xml, .md, .html or .json`);
  let format: ReportFormat;
  try {
    format = report.parseFormat(named, '--format');
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (!ids.length && !opts.since) throw new UsageError('name the runs to report (RUN...) or pass --since DURATION');
  const stateDir = resolveStateDir(ctx.env);
  const chosen = [...ids];
  if (opts.since) {
    const from = Date.now() - parseDuration(opts.since, '--since');
    for (const r of listRunRecords(stateDir)) if (Date.parse(r.openedAt) >= from && !chosen.includes(r.runId)) chosen.push(r.runId);
  }
  const secrets = [ctx.env.SVC_TOKEN, ctx.env.SVC_RUN_TOKEN].filter((s): s is string => Boolean(s));
  const runs = [];
  for (const id of chosen) {
    try {
      runs.push(await report.buildRunReport(stateDir, id, { secrets }));
    } catch (error) {
      const code = (error as { exitCode?: number }).exitCode;
      throw Object.assign(new Error((error as Error).message), { exitCode: code ?? EXIT.notFound });
    }
  }
  runs.sort((a, b) => a.startedAt.localeCompare(b.startedAt));
  if (!runs.length) ctx.out.warn(`no local runs opened in the last ${opts.since}`);
  const path = output === '-' ? '-' : (await import('node:path')).resolve(ctx.cwd, output);
  try {
    report.writeReportFile(path, report.renderReport(format, runs), ctx.stdout);
  } catch (error) {
    throw Object.assign(new Error(`cannot write ${path}: ${(error as Error).message.split('\n')[0]}`), { exitCode: EXIT.failed });
  }
  if (path !== '-') ctx.out.info(`${format} report of ${runs.length} run${runs.length === 1 ? '' : 's'}: ${path}`);
}
