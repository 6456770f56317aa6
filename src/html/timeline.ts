// The Gantt-like timeline of a run's legs: one row per card, its bar placed across the run's wall
// time, so legs that ran in parallel overlap visibly. Pure HTML and CSS (percent positions, no
// script), shared by the HTML report and the live page of `svc server`. A leaf: it imports only
// its sibling, so the report and the server share it without either depending on the other.
import { escapeHtml } from './escape.js';

export interface TimelineBar {
  key: string;
  /** Link target of the row's label (an anchor in the page), optional. */
  href?: string;
  disposition: string;
  /** Epoch ms; null: the leg never started (skipped, not reached). */
  start: number | null;
  /** Epoch ms; null while it runs (drawn up to the span's end). */
  end: number | null;
  /** A short note in the empty track of a leg that never started (the skip reason). */
  note?: string | null;
  /** The text on the bar (default: its length in wall time). */
  label?: string;
}

/** `1h 02m`, `3m 07s`, `4.2s`, `350ms`. */
export function formatDuration(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms)) return '–';
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)}s`;
  const s = Math.round(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

const pct = (x: number) => `${(Math.round(x * 10000) / 100).toFixed(2)}%`;

/** The timeline of `bars` across [spanStart, spanEnd] (epoch ms). */
export function timelineHtml(bars: readonly TimelineBar[], spanStart: number, spanEnd: number): string {
  const total = Math.max(1, spanEnd - spanStart);
  const ticks = [0, 0.25, 0.5, 0.75, 1]
    .map((f) => `<span class="tl-tick" style="left:${pct(f)}">${escapeHtml(f === 0 ? '0s' : formatDuration(f * total))}</span>`)
    .join('');
  const rows = bars.map((b) => {
    const label = b.href ? `<a href="${escapeHtml(b.href)}">${escapeHtml(b.key)}</a>` : escapeHtml(b.key);
    let track: string;
    if (b.start === null) {
      track = `<span class="tl-note">${escapeHtml(b.disposition.replace('_', ' '))}${b.note ? `: ${escapeHtml(b.note)}` : ''}</span>`;
    } else {
      const from = Math.min(Math.max(0, b.start - spanStart), total);
      const to = Math.min(Math.max(from, (b.end ?? spanEnd) - spanStart), total);
      const took = b.label ?? formatDuration((b.end ?? spanEnd) - b.start);
      const title = `${b.key} ${b.disposition} · ${took}`;
      track =
        `<span class="tl-bar d-${escapeHtml(b.disposition.replace(/[^a-z_]/g, ''))}" style="left:${pct(from / total)};width:${pct((to - from) / total)}" ` +
        `title="${escapeHtml(title)}" data-key="${escapeHtml(b.key)}" data-disposition="${escapeHtml(b.disposition)}"><span class="tl-bar-text">${escapeHtml(took)}</span></span>`;
    }
    return `<div class="tl-row"><div class="tl-label">${label}</div><div class="tl-track">${track}</div></div>`;
  });
  return (
    `<div class="tl" role="figure" aria-label="timeline of the legs">` +
    `<div class="tl-row tl-axis"><div class="tl-label"></div><div class="tl-track">${ticks}</div></div>` +
    rows.join('') +
    `</div>`
  );
}

/** The timeline's styles; colours come from the page's custom properties (light and dark). */
export const TIMELINE_CSS = `
.tl{display:grid;gap:4px;margin:12px 0 20px;font-size:13px}
.tl-row{display:grid;grid-template-columns:minmax(90px,max-content) 1fr;gap:10px;align-items:center}
.tl-label{font-family:var(--mono);white-space:nowrap}
.tl-track{position:relative;height:22px;border-radius:4px;background-color:var(--track);background-image:linear-gradient(to right,var(--grid) 1px,transparent 1px);background-size:25% 100%}
.tl-axis .tl-track{height:16px;background:none}
.tl-tick{position:absolute;top:0;transform:translateX(-50%);color:var(--muted);font-size:11px;white-space:nowrap}
.tl-tick:first-child{transform:none}.tl-tick:last-child{transform:translateX(-100%)}
.tl-bar{position:absolute;top:2px;bottom:2px;min-width:3px;border-radius:3px;overflow:hidden;background:var(--muted);print-color-adjust:exact;-webkit-print-color-adjust:exact}
.tl-bar-text{display:block;padding:0 6px;line-height:18px;font-size:11px;color:#fff;white-space:nowrap;overflow:hidden;text-overflow:clip}
.tl-bar.d-implemented{background:var(--ok)}.tl-bar.d-failed{background:var(--bad)}
.tl-bar.d-running{background:repeating-linear-gradient(45deg,var(--run) 0 8px,var(--run2) 8px 16px)}
.tl-note{position:absolute;left:8px;top:0;line-height:22px;color:var(--muted);font-size:12px;white-space:nowrap;overflow:hidden;max-width:calc(100% - 16px);text-overflow:ellipsis}
`;

/** Colours for light and dark; pages include it once. */
export const THEME_CSS = `
:root{color-scheme:light dark;--fg:#1f2328;--bg:#fff;--card:#f6f8fa;--border:#d0d7de;--muted:#656d76;--grid:rgba(31,35,40,.12);--track:#f6f8fa;
--ok:#1a7f37;--bad:#cf222e;--run:#0969da;--run2:#3b8eea;--skip:#8c959f;--link:#0969da;--mono:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--bg:#0d1117;--card:#161b22;--border:#30363d;--muted:#8d96a0;--grid:rgba(230,237,243,.12);--track:#161b22;
--ok:#238636;--bad:#da3633;--run:#1f6feb;--run2:#388bfd;--skip:#6e7681;--link:#4493f8}}
`;
