// What svc writes on a pull request: the title `KEY: <title>` and a body naming the card, the run,
// the leg's time and spend, and the agent's final message. Everything passes the run's redactor
// before it leaves: an agent can print a token in its last words as easily as anywhere else.
import { formatDuration } from './format.js';
import type { PullRequestLeg } from './types.js';

/** GitHub refuses bodies above 65,536 characters; the agent's message is cut to leave room. */
const MAX_MESSAGE_CHARS = 60_000;

/** Marks svc's own pull requests and comments, so a human can tell them apart. */
export const SVC_MARKER = '<!-- svc -->';

export function pullRequestTitle(leg: Pick<PullRequestLeg, 'key' | 'title'>): string {
  return `${leg.key}: ${leg.title}`.replace(/[\r\n]+/g, ' ').slice(0, 256);
}

function spendLine(leg: PullRequestLeg): string | null {
  const parts: string[] = [];
  if (leg.tokens.in !== null || leg.tokens.out !== null) parts.push(`tokens ${leg.tokens.in ?? '?'} in / ${leg.tokens.out ?? '?'} out`);
  if (leg.costUsd !== null) parts.push(`cost $${leg.costUsd.toFixed(2)}`);
  return parts.length ? parts.join(', ') : null;
}

function message(leg: PullRequestLeg): string {
  const text = leg.finalMessage?.trim();
  if (!text) return '_The agent left no final message._';
  return text.length > MAX_MESSAGE_CHARS ? `…${text.slice(-MAX_MESSAGE_CHARS)}` : text;
}

function facts(leg: PullRequestLeg): string[] {
  const spend = spendLine(leg);
  return [
    `- **Work item:** ${leg.key} — ${leg.title}`,
    `- **Run:** \`${leg.runId}\` (\`svc ${leg.command}\`)`,
    `- **Leg duration:** ${formatDuration(leg.durationMs)}`,
    ...(spend ? [`- **Spend:** ${spend}`] : []),
  ];
}

/** The pull request's body for an implemented leg. */
export function pullRequestBody(leg: PullRequestLeg, redact: (s: string) => string): string {
  return redact([SVC_MARKER, ...facts(leg), '', '### What the agent said', '', message(leg), ''].join('\n'));
}

/** A review leg's review: the agent's text, with the same facts below it. */
export function reviewBody(leg: PullRequestLeg, redact: (s: string) => string): string {
  return redact([SVC_MARKER, message(leg), '', '---', ...facts(leg), ''].join('\n'));
}

/** A fix leg's comment: what it changed (its new commits) and what the agent said. */
export function fixCommentBody(leg: PullRequestLeg, commits: readonly string[], redact: (s: string) => string): string {
  const changed = commits.length ? ['### What changed', '', ...commits.map((c) => `- ${c}`)] : ['_No new commits._'];
  return redact(
    [
      SVC_MARKER,
      `svc fixed ${leg.key} on \`${leg.branch}\`.`,
      '',
      ...changed,
      '',
      '### What the agent said',
      '',
      message(leg),
      '',
      '---',
      ...facts(leg),
      '',
    ].join('\n'),
  );
}
