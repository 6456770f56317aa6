// JUnit XML, the one format every CI system shows: one <testsuite> per run, one <testcase> per
// card. Skipped and not-reached cards are <skipped> with the reason; a failed leg is a <failure>
// with its reason and the log's last lines; a leg the local state last saw running is an <error>.
// Checked against test/fixtures/report/junit.xsd (the shape Jenkins and GitLab read).
import { refusalLines } from './markdown.js';
import type { LegReport, RunReport } from './types.js';

/** XML 1.0 forbids most C0 controls even escaped; agents print them. */
const NOT_XML = /[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]/g;

function xml(text: string): string {
  return text.replace(NOT_XML, '').replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
}

/** Text for a CDATA-free element body: `]]>` needs no care once `>` is escaped. */
const body = (text: string) => xml(text).replace(/\r/g, '&#13;');

const seconds = (ms: number | null) => ((ms ?? 0) / 1000).toFixed(3);

function testcase(run: RunReport, leg: LegReport, name: string): string {
  const attrs = `name="${xml(name)}" classname="${xml(`svc.${run.projectKey}.${run.command}`)}" time="${seconds(leg.durationMs)}"`;
  const out: string[] = [];
  if (leg.branch) out.push(`branch: ${leg.branch}`);
  if (leg.exitCode !== null) out.push(`exit code: ${leg.exitCode}`);
  if (leg.costUsd !== null) out.push(`cost: $${leg.costUsd.toFixed(4)}`);
  if (leg.tokens.in !== null || leg.tokens.out !== null) out.push(`tokens: ${leg.tokens.in ?? 0} in, ${leg.tokens.out ?? 0} out`);
  for (const c of leg.commits) out.push(`commit ${c.sha} ${c.subject}`);
  if (leg.check.status !== 'none')
    out.push(`check: ${leg.check.status}${leg.check.exitCode !== null ? ` (exit ${leg.check.exitCode})` : ''}: ${leg.check.command}`);
  if (leg.attempts !== null && leg.attempts > 1) out.push(`attempts: ${leg.attempts}`);
  if (leg.network) out.push(`network: ${leg.network.mode}`, ...refusalLines(leg));
  if (leg.bestOf) {
    out.push(leg.bestOf.why);
    for (const a of leg.bestOf.attempts)
      out.push(
        `attempt ${a.attempt} (${a.agent}): ${a.disposition}, check ${a.check}, ${seconds(a.durationMs)}s${a.costUsd !== null ? `, $${a.costUsd.toFixed(4)}` : ''}${a.branch ? `, ${a.branch}` : ''}${a.reason ? `: ${a.reason}` : ''}`,
      );
  }
  if (leg.diffStat) out.push(leg.diffStat);
  const systemOut = out.length ? `<system-out>${body(out.join('\n'))}</system-out>` : '';
  let verdict = '';
  if (leg.disposition === 'skipped' || leg.disposition === 'not_reached') {
    const why = leg.disposition === 'skipped' ? (leg.skipReason ?? 'skipped') : `not reached (the run stopped ${run.stopReason ?? 'early'})`;
    verdict = `<skipped message="${xml(why)}"/>`;
  } else if (leg.disposition === 'failed') {
    const reason = leg.reason ?? 'failed';
    // A failed check is the failure CI should show: its output first, then the log.
    const check = leg.check.status === 'failed' ? `\n\n--- output of the check (${leg.check.command}) ---\n${leg.check.output ?? ''}` : '';
    const text = `${reason}${check}${leg.logTail ? `\n\n--- last lines of the log ---\n${leg.logTail}` : ''}`;
    const type = leg.check.status === 'failed' ? 'check' : leg.exitCode === null ? 'failed' : `exit ${leg.exitCode}`;
    verdict = `<failure message="${xml(reason)}" type="${xml(type)}">${body(text)}</failure>`;
  } else if (leg.disposition !== 'implemented') {
    verdict = `<error message="${xml(`leg ${leg.disposition} when the report was made`)}" type="${xml(leg.disposition)}"/>`;
  }
  return `    <testcase ${attrs}>${verdict}${systemOut}</testcase>`;
}

function suite(run: RunReport): string {
  const cases = run.legs.map((l) => testcase(run, l, l.title ? `${l.key} ${l.title}` : l.key));
  if (run.closeOut) cases.push(testcase(run, run.closeOut, `${run.closeOut.key} close-out`));
  const legs = run.closeOut ? [...run.legs, run.closeOut] : run.legs;
  const failures = legs.filter((l) => l.disposition === 'failed').length;
  const errors = legs.filter((l) => !['failed', 'implemented', 'skipped', 'not_reached'].includes(l.disposition)).length;
  const skipped = legs.filter((l) => l.disposition === 'skipped' || l.disposition === 'not_reached').length;
  const props: [string, string | number | null][] = [
    ['run', run.runId],
    ['project', run.projectKey],
    ['command', run.command],
    ['scope', run.scopeKey],
    ['status', run.status],
    ['stopReason', run.stopReason],
    ['agent', run.agent],
    ['model', run.model],
    ['costUsd', run.totals.costUsd],
    ['tokensIn', run.totals.tokens.in],
    ['tokensOut', run.totals.tokens.out],
  ];
  const properties = props
    .filter(([, v]) => v !== null)
    .map(([k, v]) => `      <property name="${k}" value="${xml(String(v))}"/>`)
    .join('\n');
  const name = `svc ${run.command}${run.scopeKey ? ` ${run.scopeKey}` : ''} (${run.runId})`;
  return [
    `  <testsuite name="${xml(name)}" id="${xml(run.runId)}" tests="${cases.length}" failures="${failures}" errors="${errors}" skipped="${skipped}" time="${seconds(run.durationMs)}" timestamp="${xml(run.startedAt.replace(/\.\d+Z$|Z$/, ''))}">`,
    `    <properties>\n${properties}\n    </properties>`,
    ...cases,
    `  </testsuite>`,
  ].join('\n');
}

export function renderJunit(runs: readonly RunReport[]): string {
  const all = runs.flatMap((r) => (r.closeOut ? [...r.legs, r.closeOut] : r.legs));
  const time = runs.reduce((a, r) => a + (r.durationMs ?? 0), 0);
  const failures = all.filter((l) => l.disposition === 'failed').length;
  const errors = all.filter((l) => !['failed', 'implemented', 'skipped', 'not_reached'].includes(l.disposition)).length;
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<testsuites name="svc" tests="${all.length}" failures="${failures}" errors="${errors}" time="${seconds(time)}">`,
    ...runs.map(suite),
    `</testsuites>`,
    '',
  ].join('\n');
}
