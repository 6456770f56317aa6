// The pages of the read-only view: plain HTML and CSS, the timeline shared with the HTML report
// (src/html, a leaf that imports nothing of the client), and one small script that refreshes the
// live part of a page; without script a running run's page reloads itself (<noscript> refresh).
import { escapeHtml as h } from '../../html/escape.js';
import { formatDuration, THEME_CSS, TIMELINE_CSS, timelineHtml } from '../../html/timeline.js';
import type { RunRowView, RunView } from './data.js';

const CSS = `
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:14px/1.5 -apple-system,BlinkMacSystemFont,"Segoe UI",Helvetica,Arial,sans-serif}
header.top{display:flex;align-items:center;justify-content:space-between;padding:10px 24px;border-bottom:1px solid var(--border);background:var(--card)}
header.top a{color:var(--fg);text-decoration:none;font-weight:600}
header.top form{margin:0}
main{max-width:1100px;margin:0 auto;padding:24px}
a{color:var(--link)}
h1{font-size:20px;margin:0 0 14px}h2{font-size:15px;margin:22px 0 8px}
code,.mono{font-family:var(--mono);font-size:12.5px}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:6px 8px;border-bottom:1px solid var(--border);vertical-align:top}
th{color:var(--muted);font-size:12px;font-weight:600}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.badge{display:inline-block;padding:1px 8px;border-radius:999px;font-size:12px;font-weight:600;color:#fff;background:var(--skip)}
.s-succeeded,.s-implemented{background:var(--ok)}.s-failed{background:var(--bad)}.s-running{background:var(--run)}.s-cancelled,.s-timed_out,.s-abandoned{background:#9a6700}
.facts{display:grid;grid-template-columns:repeat(auto-fill,minmax(150px,1fr));gap:8px 16px;margin:0}
.facts div{background:var(--card);border:1px solid var(--border);border-radius:6px;padding:6px 10px}
.facts dt{color:var(--muted);font-size:12px}.facts dd{margin:0;font-weight:600;overflow-wrap:anywhere}
.muted{color:var(--muted)}
.login{max-width:420px;margin:60px auto;border:1px solid var(--border);border-radius:8px;padding:24px;background:var(--card)}
.login input{width:100%;padding:8px;margin:8px 0 14px;border:1px solid var(--border);border-radius:6px;background:var(--bg);color:var(--fg);font-family:var(--mono)}
button{padding:6px 14px;border:1px solid var(--border);border-radius:6px;background:var(--bg);color:var(--fg);font:inherit;cursor:pointer}
.error{color:var(--bad);font-weight:600}
.live-dot{display:inline-block;width:8px;height:8px;border-radius:50%;background:var(--run);margin-right:6px;vertical-align:1px}
@media print{header.top form{display:none}}
`;

const badge = (s: string) => `<span class="badge s-${h(s.replace(/[^a-z_]/g, ''))}">${h(s.replace('_', ' '))}</span>`;
const when = (iso: string | null) => (iso ? `<span class="mono">${h(iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z'))}</span>` : '–');
const span = (a: string, b: string | null, now: number) => formatDuration((b ? Date.parse(b) : now) - Date.parse(a));

export function layout(title: string, body: string, opts: { loggedIn: boolean; refreshSeconds?: number }): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${h(title)}</title><style>${THEME_CSS}${TIMELINE_CSS}${CSS}</style>
${opts.refreshSeconds ? `<noscript><meta http-equiv="refresh" content="${opts.refreshSeconds}"></noscript>` : ''}
<script src="/web/live.js" defer></script></head>
<body><header class="top"><a href="/">svc · dispatch runs</a>${opts.loggedIn ? '<form method="post" action="/logout"><button type="submit">Log out</button></form>' : ''}</header>
<main>${body}</main></body></html>
`;
}

export function loginPage(error: string | null): string {
  return layout(
    'svc: log in',
    `<form class="login" method="post" action="/login">
<h1>Log in</h1>
<p class="muted">A personal access token of this service (<code>svc_pat_…</code>) with the <code>project:browse</code> scope. It is kept on the server for this session only; your browser holds a session cookie.</p>
${error ? `<p class="error" role="alert">${h(error)}</p>` : ''}
<label for="token">Token</label>
<input id="token" name="token" type="password" autocomplete="off" spellcheck="false" required autofocus>
<button type="submit">Log in</button></form>`,
    { loggedIn: false },
  );
}

/** The live part of the runs list (replaced in place by the script). */
export function runsFragment(rows: readonly RunRowView[], now: number, intervalMs: number): string {
  // Always live: a run opened elsewhere appears without a reload.
  const body = rows.length
    ? `<table class="runs"><thead><tr><th>Run</th><th>Project</th><th>Command</th><th>Scope</th><th>Status</th><th class="num">Cards</th><th>Started</th><th class="num">Duration</th></tr></thead><tbody>
${rows.map((r) => `<tr data-run="${h(r.id)}"><td><a href="/runs/${encodeURIComponent(r.id)}"><code>${h(r.id)}</code></a></td><td>${h(r.projectKey)}</td><td><code>${h(r.command)}</code>${r.origin === 'hosted' ? ' <span class="muted">hosted</span>' : ''}</td><td>${h(r.scopeKey ?? '')}</td><td>${badge(r.status)}${r.stopReason ? ` <span class="muted">${h(r.stopReason)}</span>` : ''}</td><td class="num">${r.implemented} ✓ · ${r.failed} ✗ · ${r.cards}</td><td>${when(r.startedAt)}</td><td class="num">${h(span(r.startedAt, r.endedAt, now))}</td></tr>`).join('\n')}
</tbody></table>`
    : '<p class="muted">No dispatch runs yet.</p>';
  return `<div id="live" data-live="1" data-interval="${intervalMs}">${body}</div>`;
}

export function runsPage(rows: readonly RunRowView[], now: number, intervalMs: number): string {
  return layout('svc: dispatch runs', `<h1>Dispatch runs <span class="muted">newest first</span></h1>${runsFragment(rows, now, intervalMs)}`, {
    loggedIn: true,
    refreshSeconds: 10,
  });
}

/** The live part of a run's page: facts, timeline, legs. */
export function runFragment(v: RunView, now: number, intervalMs: number): string {
  const { run } = v;
  const live = run.status === 'running';
  const start = Date.parse(run.startedAt);
  const legEnds = v.legs.map((l) => (l.endedAt ? Date.parse(l.endedAt) : 0));
  const end = Math.max(start + 1, run.endedAt ? Date.parse(run.endedAt) : now, ...legEnds);
  const bars = v.legs.map((l) => ({
    key: l.key,
    disposition: l.disposition,
    note: l.skipReason,
    start: l.startedAt ? Date.parse(l.startedAt) : null,
    end: l.endedAt ? Date.parse(l.endedAt) : null,
  }));
  const facts: [string, string][] = [
    ['Command', `<code>svc ${h(String(run.command))}</code>`],
    ['Project', h(v.projectKey)],
    [
      'Scope',
      v.scopeKey
        ? h(v.scopeKey)
        : run.scopeLabel
          ? h(run.scopeLabel)
          : namedCards(
              String(run.command),
              v.legs.map((l) => l.key),
            ),
    ],
    ['Status', `${live ? '<span class="live-dot" title="live"></span>' : ''}${badge(String(run.status))}`],
    ['Stop reason', h(run.stopReason ?? '–')],
    ['Started', when(run.startedAt)],
    ['Duration', h(span(run.startedAt, run.endedAt, now))],
    ['Agent', h(run.agent ? `${run.agent}${run.model ? ` (${run.model})` : ''}` : '–')],
    ['Origin', h(String(run.origin))],
    ['Last heartbeat', when(run.lastHeartbeatAt)],
  ];
  const rows = v.legs.map(
    (l) =>
      `<tr data-key="${h(l.key)}"><td><code>${h(l.key)}</code> ${h(l.title ?? '')}</td><td>${badge(l.disposition)}</td><td class="num">${l.startedAt ? h(formatDuration((l.endedAt ? Date.parse(l.endedAt) : now) - Date.parse(l.startedAt))) : ''}</td><td class="num">${l.exitCode ?? ''}</td><td>${l.branch ? `<code>${h(l.branch)}</code>` : ''}</td><td>${h(l.skipReason ?? '')}</td></tr>`,
  );
  return `<div id="live" data-live="${live ? 1 : 0}" data-interval="${intervalMs}">
<dl class="facts">${facts.map(([k, x]) => `<div><dt>${h(k)}</dt><dd>${x}</dd></div>`).join('')}</dl>
<h2>Timeline</h2>
${timelineHtml(bars, start, end)}
<h2>Legs</h2>
<table class="legs"><thead><tr><th>Card</th><th>Disposition</th><th class="num">Duration</th><th class="num">Exit</th><th>Branch</th><th>Skip reason</th></tr></thead><tbody>
${rows.join('\n')}
</tbody></table></div>`;
}

export function runPage(v: RunView, now: number, intervalMs: number): string {
  return layout(`svc: run ${v.run.id}`, `<p><a href="/">← all runs</a></p><h1>Run <code>${h(v.run.id)}</code></h1>${runFragment(v, now, intervalMs)}`, {
    loggedIn: true,
    ...(v.run.status === 'running' ? { refreshSeconds: 5 } : {}),
  });
}

export function notFoundPage(loggedIn: boolean): string {
  return layout('svc: not found', '<h1>Not found</h1><p><a href="/">All runs</a></p>', { loggedIn });
}

/** Replaces #live with a fresh copy of itself while it says it is live. */
export const LIVE_JS = `(function () {
  var el = document.getElementById('live');
  if (!el) return;
  var interval = Number(el.getAttribute('data-interval')) || 2000;
  function tick() {
    if (el.getAttribute('data-live') !== '1') return;
    var url = location.pathname + '?fragment=1';
    fetch(url, { credentials: 'same-origin', cache: 'no-store' })
      .then(function (r) { if (r.status === 401) { location.reload(); return null; } return r.ok ? r.text() : null; })
      .then(function (text) {
        if (!text) return;
        var box = document.createElement('div');
        box.innerHTML = text;
        var next = box.firstElementChild;
        if (next && next.id === 'live') { el.replaceWith(next); el = next; }
      })
      .catch(function () {})
      .then(function () { setTimeout(tick, interval); });
  }
  setTimeout(tick, interval);
})();
`;

/** No scope: a run of named keys (`svc run A B`) shows its cards, any other none. */
function namedCards(command: string, keys: string[]): string {
  return ['run', 'fix', 'review'].includes(command) && keys.length ? h(keys.join(', ')) : '<span class="muted">none</span>';
}
