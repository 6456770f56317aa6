// The HTML report: one self-contained file (no network, no script) that reads well in light and
// dark and on paper. Per run: a header of facts, the timeline of its legs (shared with the live
// page of `svc server`), an overview table, then per card a table of what happened, its commits,
// `git diff --stat` and the tail of its log behind <details>.
import { escapeHtml } from '../../html/escape.js';
import { formatDuration, THEME_CSS, TIMELINE_CSS, timelineHtml, type TimelineBar } from '../../html/timeline.js';
import { hasWorkflow, refusalLines, tokenCount, usd } from './markdown.js';
import type { LegReport, RunReport } from './types.js';
import { visible } from '../../ui/visible.js';

/** Text in the page: escaped, its control characters shown (titles, reasons and logs are anyone's text). */
const h = (text: string): string => escapeHtml(visible(text));

const PAGE_CSS = `
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:14px/1.5 -apple-system,BlinkMacSystemFont,"Segoe UI",Helvetica,Arial,sans-serif}
main{max-width:1100px;margin:0 auto;padding:24px}
a{color:var(--link)}
h1{font-size:22px;margin:0 0 16px}h2{font-size:19px;margin:0 0 10px}h3{font-size:15px;margin:22px 0 8px}h4{font-size:14px;margin:0 0 8px}
code,pre,.mono{font-family:var(--mono);font-size:12.5px}
section.run{border:1px solid var(--border);border-radius:8px;padding:20px;margin:0 0 28px;background:var(--bg)}
.facts{display:grid;grid-template-columns:repeat(auto-fill,minmax(150px,1fr));gap:8px 16px;margin:12px 0 0}
.facts div{background:var(--card);border:1px solid var(--border);border-radius:6px;padding:6px 10px}
.facts dt{color:var(--muted);font-size:12px}.facts dd{margin:0;font-weight:600;overflow-wrap:anywhere}
.badge{display:inline-block;padding:1px 8px;border-radius:999px;font-size:12px;font-weight:600;color:#fff;background:var(--skip);vertical-align:2px}
.s-succeeded,.s-implemented,.s-passed{background:var(--ok)}.s-failed{background:var(--bad)}.s-running{background:var(--run)}
.s-cancelled,.s-timed_out{background:#9a6700}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:5px 8px;border-bottom:1px solid var(--border);vertical-align:top}
th{color:var(--muted);font-weight:600;font-size:12px}
td code{white-space:nowrap}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
article.leg{border:1px solid var(--border);border-radius:6px;padding:12px 14px;margin:12px 0;break-inside:avoid}
h5{font-size:12px;color:var(--muted);margin:10px 0 4px;font-weight:600}
.changes{display:grid;grid-template-columns:1fr 1fr;gap:16px}
@media (max-width:700px){.changes{grid-template-columns:1fr}}
article.leg p{margin:8px 0}
article.leg.failed{border-left:4px solid var(--bad)}article.leg.implemented{border-left:4px solid var(--ok)}
pre{background:var(--card);border:1px solid var(--border);border-radius:6px;padding:8px 10px;overflow:auto;white-space:pre-wrap;overflow-wrap:anywhere;margin:6px 0}
ul.commits{margin:0;padding-left:18px}
.reason{color:var(--bad);font-weight:600}
.muted{color:var(--muted)}
details summary{cursor:pointer;color:var(--muted);margin-top:8px}
footer{color:var(--muted);font-size:12px;margin-top:24px}
@media print{
 :root{--fg:#000;--bg:#fff;--card:#fff;--border:#999;--muted:#444;--track:#fff;--grid:rgba(0,0,0,.25)}
 body{font-size:11px}main{max-width:none;padding:0}
 section.run{border:none;padding:0;break-after:page}
 pre{white-space:pre-wrap;max-height:none;overflow:visible}
 details>summary{list-style:none}
 details::details-content{content-visibility:visible;display:block}
 a{color:inherit;text-decoration:none}
}
`;

const badge = (status: string) => `<span class="badge s-${h(status.replace(/[^a-z_]/g, ''))}">${h(status.replace('_', ' '))}</span>`;
const ms = (iso: string | null) => (iso ? Date.parse(iso) : null);
const anchor = (run: RunReport, key: string) => `leg-${run.runId}-${key}`.replace(/[^A-Za-z0-9_-]/g, '-');

function fact(name: string, value: string, cls = ''): string {
  return `<div class="${cls}"><dt>${h(name)}</dt><dd>${value}</dd></div>`;
}

const checkCell = (l: LegReport) =>
  l.check.status === 'none'
    ? '<span class="muted">none</span>'
    : `${badge(l.check.status)}${l.attempts !== null && l.attempts > 1 ? ` <span class="muted">${l.attempts} attempts</span>` : ''}`;

/** Best-of-N: every attempt of the card, and why the winner won. */
function attemptsBlock(l: LegReport): string {
  const b = l.bestOf!;
  const rows = b.attempts
    .map(
      (a) =>
        `<tr><td class="num">${a.attempt}${a.attempt === b.winner ? ' (won)' : ''}</td><td>${h(a.agent)}</td><td>${a.branch ? `<code>${h(a.branch)}</code>` : ''}</td><td>${badge(a.disposition)}</td><td>${a.check === 'none' ? '<span class="muted">none</span>' : badge(a.check)}</td><td class="num">${h(formatDuration(a.durationMs))}</td><td class="num">${h(usd(a.costUsd))}</td><td class="num">${a.diffLines ?? ''}</td><td>${h(a.reason ?? '')}</td></tr>`,
    )
    .join('');
  return `<h5>Attempts</h5><p>${h(b.why)}</p><table class="attempts"><thead><tr><th class="num">Attempt</th><th>Agent</th><th>Branch</th><th>Result</th><th>Check</th><th class="num">Duration</th><th class="num">Cost</th><th class="num">Diff lines</th><th>Reason</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function legArticle(run: RunReport, l: LegReport, label: string): string {
  const facts: [string, string][] = [
    ['Disposition', badge(l.disposition)],
    ...(hasWorkflow(run) ? [['Check', checkCell(l)] as [string, string]] : []),
    ['Duration', h(formatDuration(l.durationMs))],
    ['Exit code', l.exitCode === null ? '–' : h(String(l.exitCode))],
    ['Tokens', h(tokenCount(l.tokens) ? `${tokenCount(l.tokens)} (${l.tokens.in ?? 0} in / ${l.tokens.out ?? 0} out)` : '–')],
    ['Cost', h(usd(l.costUsd) || '–')],
    ['Branch', l.branch ? `<code>${h(l.branch)}</code>` : '–'],
    ['Base', l.base ? `<code>${h(l.base.slice(0, 12))}</code>` : '–'],
    ...(l.network ? [['Network', h(`${l.network.mode}${l.network.refused.length ? `, ${l.network.refused.length} refused` : ''}`)] as [string, string]] : []),
  ];
  const blocks: string[] = [];
  if (l.skipReason) blocks.push(`<p><strong>Skip reason:</strong> ${h(l.skipReason)}</p>`);
  if (l.disposition === 'failed') blocks.push(`<p><strong>Failure reason:</strong> <span class="reason">${h(l.reason ?? 'failed')}</span></p>`);
  if (l.check.status === 'failed') blocks.push(`<h5>Check: <code>${h(l.check.command ?? '')}</code></h5><pre class="check">${h(l.check.output ?? '')}</pre>`);
  if (l.network?.refused.length) blocks.push(`<h5>Network refusals (${h(l.network.mode)})</h5><pre class="refused">${h(refusalLines(l).join('\n'))}</pre>`);
  if (l.bestOf) blocks.push(attemptsBlock(l));
  if (l.startedAt) {
    const commits = l.commits.length
      ? `<ul class="commits">${l.commits.map((c) => `<li><code>${h(c.sha)}</code> ${h(c.subject)}</li>`).join('')}</ul>`
      : '<p class="muted">No commits.</p>';
    blocks.push(
      `<div class="changes"><div><h5>Commits</h5>${commits}</div><div><h5>git diff --stat</h5>${l.diffStat ? `<pre class="stat">${h(l.diffStat)}</pre>` : '<p class="muted">No changes.</p>'}</div></div>`,
    );
  }
  if (l.logTail !== null) {
    const n = l.logTail ? l.logTail.split('\n').length : 0;
    blocks.push(
      `<details${l.disposition === 'failed' ? ' open' : ''}><summary>Log: last ${n} line${n === 1 ? '' : 's'}</summary><pre class="log">${h(l.logTail)}</pre></details>`,
    );
  }
  return `<article class="leg ${h(l.disposition)}" id="${anchor(run, l.key)}" data-key="${h(l.key)}"><h4>${badge(l.disposition)} ${h(label)}</h4>
<table class="kv"><thead><tr>${facts.map(([k]) => `<th>${h(k)}</th>`).join('')}</tr></thead><tbody><tr>${facts.map(([, v]) => `<td>${v}</td>`).join('')}</tr></tbody></table>
${blocks.join('\n')}</article>`;
}

function runSection(run: RunReport): string {
  const t = run.totals;
  const legs = run.closeOut ? [...run.legs, run.closeOut] : run.legs;
  const labelOf = (l: LegReport) => (l === run.closeOut ? `${l.key} close-out` : l.title ? `${l.key} ${l.title}` : l.key);
  const start = ms(run.startedAt)!;
  const ends = legs.map((l) => ms(l.endedAt)).filter((x): x is number => x !== null);
  const end = Math.max(start + 1, ms(run.endedAt) ?? start, ...ends);
  const bars: TimelineBar[] = legs.map((l) => ({
    key: l === run.closeOut ? `${l.key} (close-out)` : l.key,
    href: `#${anchor(run, l.key)}`,
    disposition: l.disposition,
    start: ms(l.startedAt),
    end: ms(l.endedAt),
    note: l.skipReason,
    ...(l.durationMs !== null ? { label: formatDuration(l.durationMs) } : {}),
  }));
  const facts = [
    fact(
      'Command',
      `<code>svc ${h(run.command)}</code>${run.originalCommand !== run.command ? ` <span class="muted">(of ${h(run.originalCommand)})</span>` : ''}`,
    ),
    fact('Scope', scopeOf(run)),
    fact('Status', badge(run.status)),
    fact('Stop reason', h(run.stopReason ?? '–')),
    fact('Started', `<span class="mono">${h(run.startedAt.replace('T', ' ').replace(/\.\d+Z$/, 'Z'))}</span>`),
    fact('Duration', h(formatDuration(run.durationMs))),
    fact('Tokens', h(tokenCount(t.tokens) || '–')),
    fact('Cost', h(usd(t.costUsd) || '–')),
    fact('Agent', h(run.agent ? `${run.agent}${run.model ? ` (${run.model})` : ''}` : '–')),
    fact('Cards', h(`${t.implemented} implemented · ${t.failed} failed · ${t.skipped} skipped${t.notReached ? ` · ${t.notReached} not reached` : ''}`)),
  ];
  const checks = hasWorkflow(run);
  const overview = legs.map(
    (l) =>
      `<tr data-key="${h(l.key)}"><td><a href="#${anchor(run, l.key)}"><code>${h(l === run.closeOut ? `${l.key} (close-out)` : l.key)}</code></a> ${h(l.title ?? '')}</td><td>${badge(l.disposition)}</td>${checks ? `<td>${checkCell(l)}</td>` : ''}<td class="num">${l.durationMs === null ? '' : h(formatDuration(l.durationMs))}</td><td class="num">${l.exitCode ?? ''}</td><td class="num">${h(tokenCount(l.tokens))}</td><td class="num">${h(usd(l.costUsd))}</td><td>${l.branch ? `<code>${h(l.branch)}</code>` : ''}</td><td class="num">${l.startedAt ? l.commits.length : ''}</td><td>${h((l.disposition === 'skipped' ? l.skipReason : l.reason) ?? '')}</td></tr>`,
  );
  return `<section class="run" id="run-${h(run.runId)}" data-run="${h(run.runId)}">
<h2>${badge(run.status)} svc ${h(run.command)}${run.scopeKey ? ` ${h(run.scopeKey)}` : ''} <span class="muted mono">${h(run.runId)}</span></h2>
<dl class="facts">${facts.join('')}</dl>
<h3>Timeline</h3>
${timelineHtml(bars, start, end)}
<h3>Cards</h3>
<table class="overview"><thead><tr><th>Card</th><th>Result</th>${checks ? '<th>Check</th>' : ''}<th class="num">Duration</th><th class="num">Exit</th><th class="num">Tokens</th><th class="num">Cost</th><th>Branch</th><th class="num">Commits</th><th>Reason</th></tr></thead>
<tbody>${overview.join('\n')}</tbody></table>
${legs.map((l) => legArticle(run, l, labelOf(l))).join('\n')}
</section>`;
}

export function renderHtml(runs: readonly RunReport[]): string {
  const title = runs.length === 1 ? `svc ${runs[0]!.command} ${runs[0]!.runId}: ${runs[0]!.status}` : `svc report: ${runs.length} runs`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>${h(title)}</title><style>${THEME_CSS}${TIMELINE_CSS}${PAGE_CSS}</style></head>
<body><main>
<h1>${h(title)}</h1>
${runs.length ? runs.map(runSection).join('\n') : '<p class="muted">No runs to report.</p>'}
<footer>Made by svc from the local state of the runs (journal, logs, git).</footer>
</main></body></html>
`;
}

/** A run's scope: its scope key, else the cards a run of named keys was given (`svc run A B`). */
function scopeOf(run: RunReport): string {
  if (run.scopeKey) return h(run.scopeKey);
  const named = ['run', 'fix', 'review'].includes(run.originalCommand) ? run.legs.map((l) => l.key) : [];
  return named.length ? h(named.join(', ')) : '<span class="muted">none</span>';
}
