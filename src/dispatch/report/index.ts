// Reports of dispatch runs: the formats, `--report FORMAT:FILE` specs, and where markdown goes on
// its own in CI (the GitHub Actions step summary, a Buildkite annotation).
import { lastLine, run } from '../process/run.js';
import { appendFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join, resolve } from 'node:path';
import { accessSync, constants } from 'node:fs';
import { SvcError } from '../../api/errors.js';
import { renderHtml } from './html.js';
import { renderJunit } from './junit.js';
import { renderMarkdown } from './markdown.js';
import { REPORT_FORMATS, type ReportDocument, type ReportFormat, type RunReport } from './types.js';
import { makeDirs } from '../state/make-dirs.js';

export { buildRunReport, RunNotFoundLocallyError } from './model.js';
export type { ReportDocument, RunReport, LegReport, ReportFormat } from './types.js';
export { REPORT_FORMATS } from './types.js';

export interface ReportSpec {
  format: ReportFormat;
  file: string;
}

/** A bad `--report` or `--format`: a usage error (exit 2). */
export class ReportSpecError extends SvcError {
  readonly kind = 'usage';
}

export function parseFormat(text: string, flag: string): ReportFormat {
  const format = text.trim().toLowerCase();
  if (format === 'md') return 'markdown';
  if (format === 'xml') return 'junit';
  if (!(REPORT_FORMATS as readonly string[]).includes(format)) {
    throw new ReportSpecError(`${flag}: unknown format '${text}'; one of ${REPORT_FORMATS.join(', ')}`);
  }
  return format as ReportFormat;
}

/** `junit:out/svc.xml` → {format, file}; the file is resolved against `cwd`. */
export function parseReportSpec(text: string, cwd: string): ReportSpec {
  const colon = text.indexOf(':');
  if (colon <= 0 || colon === text.length - 1) {
    throw new ReportSpecError(`--report expects FORMAT:FILE (e.g. junit:svc-report.xml), got '${text}'`);
  }
  const file = text.slice(colon + 1);
  return { format: parseFormat(text.slice(0, colon), '--report'), file: file === '-' ? '-' : resolve(cwd, file) };
}

export function renderReport(format: ReportFormat, runs: readonly RunReport[]): string {
  switch (format) {
    case 'junit':
      return renderJunit(runs);
    case 'markdown':
      return renderMarkdown(runs);
    case 'html':
      return renderHtml(runs);
    case 'json':
      return JSON.stringify({ schema: 'svc.report/1', runs: [...runs] } satisfies ReportDocument, null, 2) + '\n';
  }
}

/** Writes the file whole (temp file, then rename), creating its folder; `-` is stdout. */
export function writeReportFile(file: string, text: string, stdout: NodeJS.WritableStream): void {
  if (file === '-') {
    stdout.write(text);
    return;
  }
  const existing = statSync(file, { throwIfNoEntry: false });
  if (existing && !existing.isFile()) {
    // /dev/stdout, a named pipe: written through, never replaced by a rename.
    writeFileSync(file, text);
    return;
  }
  makeDirs(dirname(file));
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, file);
}

/** GitHub caps a step summary at 1 MiB, Buildkite an annotation at 1 MiB. */
const CI_LIMIT = 1000 * 1024;

function capped(markdown: string): string {
  if (Buffer.byteLength(markdown) <= CI_LIMIT) return markdown;
  return `${Buffer.from(markdown)
    .subarray(0, CI_LIMIT - 200)
    .toString('utf8')
    .replace(/\uFFFD$/, '')}\n\n_(report cut: see the full report file)_\n`;
}

function onPath(name: string, env: Record<string, string | undefined>): string | null {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const file = join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return null;
}

async function annotate(agent: string, markdown: string, style: string, context: string, env: Record<string, string | undefined>): Promise<string | null> {
  const r = await run(agent, ['annotate', '--style', style, '--context', context], { env, input: markdown, cwd: process.cwd() });
  if (r.code === 0) return null;
  return r.code === null ? lastLine(r) : `buildkite-agent annotate exited ${r.code}: ${r.stderr.trim().split('\n')[0] ?? ''}`;
}

/**
 * Markdown where CI shows it without being asked: appended to `$GITHUB_STEP_SUMMARY` (GitHub
 * Actions), and a Buildkite annotation when `BUILDKITE` is set and `buildkite-agent` is on PATH
 * (one per run, its context `svc-<run id>`, so a retried job replaces rather than repeats it).
 * `SVC_CI_SUMMARY=0` turns both off. Returns warnings; never throws: a report must not fail a run.
 */
export async function publishToCi(runs: readonly RunReport[], env: Record<string, string | undefined>): Promise<string[]> {
  if (!runs.length || env.SVC_CI_SUMMARY === '0') return [];
  const warnings: string[] = [];
  const markdown = capped(renderMarkdown(runs));
  if (env.GITHUB_STEP_SUMMARY) {
    try {
      appendFileSync(env.GITHUB_STEP_SUMMARY, `${markdown}\n`);
    } catch (error) {
      warnings.push(`could not write the step summary: ${(error as Error).message.split('\n')[0]}`);
    }
  }
  const truthy = env.BUILDKITE && env.BUILDKITE !== 'false' && env.BUILDKITE !== '0';
  const agent = truthy ? onPath('buildkite-agent', env) : null;
  if (agent) {
    for (const run of runs) {
      const style = run.status === 'succeeded' ? 'success' : run.status === 'failed' ? 'error' : 'warning';
      const failed = await annotate(agent, capped(renderMarkdown([run])), style, `svc-${run.runId}`, env);
      if (failed) warnings.push(failed);
    }
  }
  return warnings;
}
