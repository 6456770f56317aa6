// Markdown for people reading CI: a summary table per run (GitHub-flavoured, as the step summary and
// Buildkite annotations render it) and a section per failed card with its reason and log tail.
import { formatDuration } from '../../html/timeline.js';
import { visible } from '../../ui/visible.js';
import { refusalLine } from '../fence/refusal.js';
import type { LegReport, RunReport } from './types.js';

const MARK: Record<string, string> = { implemented: '✅', failed: '❌', skipped: '⏭️', not_reached: '⏸️', running: '⏳' };
const CHECK: Record<string, string> = { passed: '✅ passed', failed: '❌ failed', none: 'none' };
const RUN_MARK: Record<string, string> = { succeeded: '✅', failed: '❌', cancelled: '🛑', timed_out: '⌛', running: '⏳' };

/** A table cell: one line, pipes escaped, no HTML, control characters shown (a title is anyone's text). */
function cell(text: string | null | undefined): string {
  return visible((text ?? '').replace(/\s+/g, ' '))
    .trim()
    .replace(/[\\|]/g, (c) => `\\${c}`)
    .replace(/</g, '&lt;');
}

export function usd(x: number | null): string {
  return x === null ? '' : `$${x < 1 ? x.toFixed(4) : x.toFixed(2)}`;
}

export function tokenCount(t: { in: number | null; out: number | null }): string {
  if (t.in === null && t.out === null) return '';
  return `${((t.in ?? 0) + (t.out ?? 0)).toLocaleString('en-US')}`;
}

/** A fence longer than any run of backticks in `text`, so a log cannot close it; control characters shown. */
function fenced(raw: string): string {
  const text = visible(raw);
  const longest = Math.max(2, ...(text.match(/`+/g) ?? []).map((m) => m.length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}text\n${text}\n${fence}`;
}

/** Whether the run had a workflow (.svc/workflow.yml): then each leg shows its check, none included. */
export const hasWorkflow = (run: RunReport) => [...run.legs, ...(run.closeOut ? [run.closeOut] : [])].some((l) => l.attempts !== null);

function legRow(l: LegReport, checks: boolean): string {
  const name = l.title ? `${l.key} ${l.title}` : l.key;
  const why = l.disposition === 'skipped' ? l.skipReason : l.reason;
  return `| ${cell(name)} | ${MARK[l.disposition] ?? '•'} ${cell(l.disposition.replace('_', ' '))}${checks ? ` | ${CHECK[l.check.status]}${l.attempts !== null && l.attempts > 1 ? ` (${l.attempts} attempts)` : ''}` : ''} | ${l.durationMs === null ? '' : formatDuration(l.durationMs)} | ${l.exitCode ?? ''} | ${tokenCount(l.tokens)} | ${usd(l.costUsd)} | ${l.branch ? `\`${cell(l.branch)}\`` : ''} | ${l.startedAt ? l.commits.length : ''} | ${cell(why)} |`;
}

function failedSection(l: LegReport): string {
  const parts = [
    `#### ❌ ${cell(l.title ? `${l.key} ${l.title}` : l.key)}`,
    '',
    `**Reason:** ${cell(l.reason ?? 'failed')}${l.exitCode !== null ? ` · exit code ${l.exitCode}` : ''}${l.branch ? ` · branch \`${cell(l.branch)}\`` : ''}`,
  ];
  if (l.check.status === 'failed') {
    parts.push('', `**Check:** \`${cell(l.check.command)}\` failed${l.check.exitCode !== null ? ` (exit ${l.check.exitCode})` : ''}`);
    if (l.check.output) parts.push('', fenced(l.check.output));
  }
  if (l.logTail) parts.push('', '<details><summary>Last lines of the log</summary>', '', fenced(l.logTail), '', '</details>');
  return parts.join('\n');
}

/** A leg's refusals, one line each (the host already made visible by the model). */
export function refusalLines(l: LegReport): string[] {
  return (l.network?.refused ?? []).map((r) => `${refusalLine(r)}${r.count > 1 ? ` ×${r.count}` : ''}`);
}

function networkSection(legs: readonly LegReport[]): string | null {
  const refusing = legs.filter((l) => l.network?.refused.length);
  if (!refusing.length) return null;
  const parts = ['#### 🧱 Network refusals', ''];
  for (const l of refusing) parts.push(`**${cell(l.key)}** (${l.network!.mode})`, '', fenced(refusalLines(l).join('\n')), '');
  return parts.join('\n').trimEnd();
}

/** Best-of-N: every attempt of the card, and why the winner won. */
function attemptsSection(l: LegReport): string {
  const b = l.bestOf!;
  return [
    `#### Attempts of ${cell(l.key)}`,
    '',
    cell(b.why),
    '',
    '| Attempt | Agent | Branch | Result | Check | Duration | Cost | Diff lines | Reason |',
    '|--:|---|---|---|---|--:|--:|--:|---|',
    ...b.attempts.map(
      (a) =>
        `| ${a.attempt}${a.attempt === b.winner ? ' 🏆' : ''} | ${cell(a.agent)} | ${a.branch ? `\`${cell(a.branch)}\`` : ''} | ${cell(a.disposition)} | ${CHECK[a.check]} | ${formatDuration(a.durationMs)} | ${usd(a.costUsd)} | ${a.diffLines ?? ''} | ${cell(a.reason)} |`,
    ),
  ].join('\n');
}

function runMarkdown(run: RunReport): string {
  const t = run.totals;
  const facts = [
    `run \`${run.runId}\``,
    `project ${run.projectKey}`,
    ...(run.scopeKey ? [`scope ${run.scopeKey}`] : []),
    ...(run.agent ? [`agent ${run.agent}${run.model ? ` (${run.model})` : ''}`] : []),
    formatDuration(run.durationMs),
    ...(tokenCount(t.tokens) ? [`${tokenCount(t.tokens)} tokens`] : []),
    ...(t.costUsd !== null ? [usd(t.costUsd)] : []),
  ];
  const counts = [
    `${t.implemented} implemented`,
    `${t.failed} failed`,
    `${t.skipped} skipped`,
    ...(t.notReached ? [`${t.notReached} not reached`] : []),
    ...(t.running ? [`${t.running} running`] : []),
  ];
  const legs = run.closeOut ? [...run.legs, { ...run.closeOut, key: `${run.closeOut.key} (close-out)` }] : run.legs;
  const checks = hasWorkflow(run);
  const out = [
    `### ${RUN_MARK[run.status] ?? '•'} svc ${run.command}${run.scopeKey ? ` ${run.scopeKey}` : ''}: ${run.status}${run.stopReason ? ` (${run.stopReason})` : ''}`,
    '',
    `${facts.join(' · ')}  `,
    `${t.cards} cards: ${counts.join(', ')}`,
    '',
    `| Card | Result |${checks ? ' Check |' : ''} Duration | Exit | Tokens | Cost | Branch | Commits | Reason |`,
    `|---|---|${checks ? '---|' : ''}--:|--:|--:|--:|---|--:|---|`,
    ...legs.map((l) => legRow(l, checks)),
  ];
  const failed = legs.filter((l) => l.disposition === 'failed');
  for (const l of failed) out.push('', failedSection(l));
  const refusals = networkSection(legs);
  if (refusals) out.push('', refusals);
  for (const l of legs) if (l.bestOf) out.push('', attemptsSection(l));
  return out.join('\n');
}

export function renderMarkdown(runs: readonly RunReport[]): string {
  if (!runs.length) return '### svc: no runs to report\n';
  return runs.map(runMarkdown).join('\n\n') + '\n';
}
