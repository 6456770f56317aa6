// Dispatch progress. On a terminal: one spinner line naming the running legs with their elapsed
// time, and a persisted line per finished leg; then a summary table. In CI or piped: plain
// timestamped lines, nothing animated. All of it on stderr: stdout carries only data.
import type { LegSummary } from '../dispatch/ports.js';
import type { RunSummary } from '../dispatch/lifecycle/types.js';
import { formatTable, type Output } from './output.js';
import { visible } from './visible.js';

interface Running {
  key: string;
  title: string;
  startedAt: number;
}

export interface RunProgress {
  legStarted(leg: { key: string; title: string; index: number; total: number; branch: string }): void;
  legFinished(leg: LegSummary): void;
  info(message: string): void;
  warn(message: string): void;
  /** Stops the animation (before the summary, or when the command fails). */
  stop(): void;
}

export function seconds(ms: number): string {
  if (ms < 59_950) return `${(ms / 1000).toFixed(1)}s`;
  // Round once, then split: rounding the remainder alone printed 119.6 s as "1m60s".
  const total = Math.round(ms / 1000);
  return `${Math.floor(total / 60)}m${String(total % 60).padStart(2, '0')}s`;
}

const stamp = (now: number) => new Date(now).toISOString().replace(/\.\d+Z$/, 'Z');

export function createRunProgress(out: Output, now: () => number = Date.now): RunProgress {
  const running = new Map<string, Running>();
  const s = out.style;

  if (!out.interactive) {
    const line = (text: string) => out.info(`${stamp(now())} ${text}`);
    return {
      legStarted: (leg) => {
        running.set(leg.key, { ...leg, startedAt: now() });
        line(`${leg.key} started (${leg.index}/${leg.total}) on ${leg.branch}: ${leg.title}`);
      },
      legFinished: (leg) => {
        running.delete(leg.key);
        const facts = [...(leg.exitCode !== null ? [`exit ${leg.exitCode}`] : []), ...(checkNote(leg) ? [checkNote(leg)] : [])];
        line(
          `${leg.key} ${leg.disposition} in ${seconds(leg.durationMs)}${facts.length ? ` (${facts.join(', ')})` : ''}${leg.reason ? `: ${leg.reason}` : ''}`,
        );
      },
      info: (m) => line(m),
      warn: (m) => line(`warning: ${m}`),
      stop: () => {},
    };
  }

  // One ora instance for all running legs: several spinners on one terminal fight each other.
  let spinner: import('ora').Ora | undefined;
  let ticker: NodeJS.Timeout | undefined;
  const text = () =>
    [...running.values()]
      .map((r) => `${s.bold(r.key)} ${visible(r.title).slice(0, Math.max(10, out.columns - 30))} ${s.dim(seconds(now() - r.startedAt))}`)
      .join(s.dim(' · '));
  // ora loads asynchronously: legs started in the same tick share one load (two loads made two
  // spinners, one of them never stopped), and a leg that ended, or a command that stopped, while it
  // loaded starts none.
  let loading: Promise<void> | undefined;
  let stopped = false;
  const ensure = (): Promise<void> =>
    spinner
      ? Promise.resolve()
      : (loading ??= import('ora').then(({ default: ora }) => {
          loading = undefined;
          if (spinner || stopped || running.size === 0) return;
          // Enabled on purpose: the output object decided from the context's env; ora would look at
          // process.env.CI on its own and could disagree.
          spinner = ora({ text: text(), stream: out.progressStream, discardStdin: false, isEnabled: true }).start();
          ticker = setInterval(() => spinner && (spinner.text = text()), 1000);
          ticker.unref();
        }));
  const persist = (symbol: string, line: string) => {
    if (spinner) {
      spinner.stopAndPersist({ symbol, text: line });
      if (running.size) spinner.start(text());
      else clear();
    } else out.info(`${symbol} ${line}`);
  };
  const clear = () => {
    if (ticker) clearInterval(ticker);
    spinner?.stop();
    spinner = undefined;
    ticker = undefined;
  };

  return {
    legStarted: (leg) => {
      running.set(leg.key, { ...leg, startedAt: now() });
      void ensure().then(() => spinner && (spinner.text = text()));
    },
    legFinished: (leg) => {
      running.delete(leg.key);
      const ok = leg.disposition === 'implemented';
      const symbol = ok ? s.green('✔') : leg.disposition === 'skipped' || leg.disposition === 'not_reached' ? s.yellow('–') : s.red('✖');
      persist(
        symbol,
        `${s.bold(leg.key)} ${visible(leg.title)} ${s.dim(seconds(leg.durationMs))} ${ok ? s.green(leg.disposition) : s.red(leg.disposition)}${leg.reason ? s.dim(` (${visible(leg.reason)})`) : ''}`,
      );
    },
    info: (m) => persist(s.cyan('ℹ'), m),
    warn: (m) => persist(s.yellow('⚠'), visible(m)),
    stop: () => {
      stopped = true;
      clear();
    },
  };
}

/** The closing table: legs, dispositions, durations, cost when known, run id, stop reason. */
export function printRunSummary(out: Output, summary: RunSummary): void {
  const runs = summary.runs?.length ? summary.runs : [summary];
  for (const run of runs) {
    if (!run.runId) {
      out.info(run.note);
      continue;
    }
    const rows = run.legs.map((l) => [
      l.key,
      l.disposition,
      seconds(l.durationMs),
      l.exitCode === null ? '' : String(l.exitCode),
      l.costUsd === null ? '' : `$${l.costUsd.toFixed(2)}`,
      l.reason ?? checkNote(l),
    ]);
    const skipped = run.cards.filter((c) => c.skipReason).map((c) => [c.key, 'skipped', '', '', '', c.skipReason ?? '']);
    // Cards the run never started: a halted (or stopped) run still lists them.
    const ran = new Set(run.legs.map((l) => l.key));
    const unreached = run.cards
      .filter((c) => !c.skipReason && !ran.has(c.key))
      .map((c) => [c.key, 'not_reached', '', '', '', run.stopReason ? `run stopped ${run.stopReason} before it` : 'never started']);
    if (run.closeOut) {
      const co = run.closeOut;
      rows.push(['close-out', co.outcome, '', co.exitCode === null ? '' : String(co.exitCode), '', co.reason ?? '']);
    }
    const cost = run.legs.reduce((sum, l) => sum + (l.costUsd ?? 0), 0);
    out.info('');
    out.info(out.style.bold(`run ${run.runId} · ${run.command} · ${run.stopReason ?? '-'} · ${run.status ?? '-'}${cost > 0 ? ` · $${cost.toFixed(2)}` : ''}`));
    const table = formatTable(
      ['CARD', 'DISPOSITION', 'TIME', 'EXIT', 'COST', 'NOTE'],
      [...rows, ...unreached, ...skipped],
      Number.POSITIVE_INFINITY,
      out.style,
    );
    for (const line of table.trimEnd().split('\n')) out.info(line);
    // Pull requests (`--pr`): one line per leg that wrote one, or the hint when none could be.
    for (const l of run.legs) {
      const pr = l.pullRequest;
      if (pr && pr.action !== 'hint' && pr.url) out.info(`${l.key}: pull request ${pr.action}: ${pr.url}`);
      else if (pr?.hint) out.info(pr.hint);
    }
    for (const l of run.legs) {
      if (l.review === undefined) continue;
      out.info('');
      out.info(out.style.bold(`review of ${l.key}:`));
      for (const line of (l.review ?? '(the agent gave no final message)').split('\n')) out.info(`  ${line}`);
    }
    if (run.status === 'failed') {
      out.info('');
      for (const l of run.legs.filter((x) => x.disposition !== 'implemented')) out.info(`${l.key}: svc logs ${run.runId} ${l.key}`);
      out.info(`run again what did not land: svc continue ${run.runId}`);
    }
  }
}

/** The workflow's check of a leg (docs/workflow.md), when it ran: `check passed after 2 attempts`. */
function checkNote(leg: LegSummary): string {
  // Best-of-N: which attempt the check picked (the verify attempts inside each are in the report).
  if (leg.bestOf) {
    const n = leg.bestOf.attempts.length;
    return leg.bestOf.winner !== null ? `attempt ${leg.bestOf.winner} of ${n} won` : `none of ${n} attempts passed`;
  }
  if (!leg.check || leg.check.status === 'none') return '';
  return `check ${leg.check.status}${leg.attempts && leg.attempts > 1 ? ` after ${leg.attempts} attempts` : ''}`;
}
