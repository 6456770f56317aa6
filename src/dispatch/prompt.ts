// The prompt an agent gets for a card (docs/agents.md): everything the work item detail says
// about the card, then what is expected of the agent. Plain markdown, sections in a fixed order, so
// an agent (and a person reading the leg's log) finds the same thing in the same place every time.
import type { Delivery, LinkItem, WorkItemDetail, WorkType } from '../contract/types.js';
import type { AncestorInfo, PromptContext } from './ports.js';
import type { LegMode } from './ports.js';

export const DEFAULT_DONE_STATUSES = ['done', 'closed', 'resolved', 'cancelled', "won't do"] as const;

const CODE_TYPES: ReadonlySet<WorkType | null> = new Set<WorkType | null>(['code', 'test', null]);

/** Whether a card's agent must leave a commit: type `code`, `test` or none (docs/agents.md). */
export function expectsCode(item: Pick<WorkItemDetail, 'type'>): boolean {
  return CODE_TYPES.has(item.type as WorkType | null);
}

function isDone(link: Pick<LinkItem, 'status' | 'statusCategory'>, doneStatuses: readonly string[]): boolean {
  if (link.statusCategory !== undefined) return link.statusCategory === 'done';
  return doneStatuses.includes(link.status.trim().toLowerCase());
}

function ancestorOf(ctx: PromptContext, key: string): AncestorInfo | undefined {
  const map = ctx.ancestors;
  if (!map) return undefined;
  return map instanceof Map ? map.get(key) : (map as Readonly<Record<string, AncestorInfo>>)[key];
}

function list(items: readonly string[], empty = 'none'): string {
  return items.length > 0 ? items.map((s) => `- ${s}`).join('\n') : `- ${empty}`;
}

function blockerLine(b: Pick<LinkItem, 'key' | 'title' | 'status'>): string {
  return `${b.key}: ${b.title} (${b.status})`;
}

/** The delivery a `fix` or `review` is about: the open one with failing CI first, then any open. */
function deliveryFor(item: WorkItemDetail, mode: LegMode): Delivery | undefined {
  const open = item.deliveries.filter((d) => d.state === 'open');
  if (mode === 'fix') return open.find((d) => d.ci === 'failing') ?? item.deliveries.find((d) => d.ci === 'failing');
  return open[0];
}

function deliveryLines(d: Delivery, branch: string): string[] {
  return [
    `- Pull request: #${d.number} ${d.title}`,
    `- URL: ${d.url}`,
    `- Repository: ${d.repo}`,
    `- Branch: \`${branch}\` (into \`${d.baseRef ?? d.defaultBranch}\`)`,
    `- State: ${d.state}; CI: ${d.ci ?? 'unknown'}`,
  ];
}

function expectations(item: WorkItemDetail, ctx: PromptContext): string[] {
  const key = item.key;
  const commit = `Commit on branch \`${ctx.branch}\`; every commit message starts with \`${key}\` (for example \`${key}: <what changed>\`).`;
  const stay = `Work only in this directory, on the branch \`${ctx.branch}\`, which is already checked out: do not switch branches, do not push, do not rewrite existing commits.`;
  const delivery = ctx.mode === 'implement' ? undefined : deliveryFor(item, ctx.mode);
  if (ctx.mode === 'review') {
    return [
      '## Your task: review',
      ...(delivery ? deliveryLines(delivery, ctx.branch) : ['- No open pull request was found for this item; review the branch as it is.']),
      '',
      `Review the change against this item. **Review only, change nothing**: do not edit files, do not commit, do not push.`,
      'Report your findings in your final answer: what is correct, what is wrong or missing, with file and line references.',
    ];
  }
  if (ctx.mode === 'fix') {
    return [
      '## Your task: fix the failing delivery',
      ...(delivery ? deliveryLines(delivery, ctx.branch) : ['- No delivery with failing CI was found; make the branch pass its checks.']),
      '',
      `Find out why CI fails and fix it on its branch \`${ctx.branch}\`.`,
      stay,
      commit,
      'Leave at least one commit with the fix.',
    ];
  }
  return [
    '## What is expected',
    stay,
    commit,
    ctx.expectsCode
      ? 'This card expects code: leave at least one commit, or the leg ends failed with "no changes".'
      : 'This card may need no code change; if you change files, commit them as above.',
    'Leave the working tree clean: commit what belongs to the change, delete what does not.',
  ];
}

/** The markdown prompt for one card. */
export function buildPrompt(item: WorkItemDetail, ctx: PromptContext): string {
  const doneStatuses = (ctx.doneStatuses ?? DEFAULT_DONE_STATUSES).map((s) => s.toLowerCase());
  const ancestors = item.ancestorKeys.map((key) => {
    const info = ancestorOf(ctx, key);
    return info?.title ? `${key}${info.kind ? ` (${info.kind})` : ''}: ${info.title}` : key;
  });
  const blockers = item.links.blockedBy;
  const openKeys = new Set(item.readiness.openBlockers.map((b) => b.key));
  const done = blockers.filter((b) => !openKeys.has(b.key) && isDone(b, doneStatuses));
  const open = [...item.readiness.openBlockers, ...blockers.filter((b) => !openKeys.has(b.key) && !isDone(b, doneStatuses))];
  const repos =
    item.targetRepositories.length > 0
      ? item.targetRepositories.map((r) => `${r.name} (${r.ref}${r.role ? `, ${r.role}` : ''}${r.primary ? ', primary' : ''})${r.label ? ` — ${r.label}` : ''}`)
      : item.targetRepos.length > 0
        ? item.targetRepos
        : item.targetRepo
          ? [item.targetRepo]
          : [];

  const sections: string[] = [
    `# ${item.key}: ${item.title}`,
    '',
    `- Key: ${item.key}`,
    `- Kind: ${item.kind}`,
    `- Type: ${item.type ?? 'none'}`,
    `- Status: ${item.status}`,
    `- Priority: ${item.priority}`,
    `- Run: ${ctx.runId}`,
    `- Branch: ${ctx.branch}`,
    '',
    '## Description',
    item.descriptionMd?.trim() ? item.descriptionMd.trim() : '(no description)',
    '',
    '## Ancestors (root first)',
    list(ancestors, 'none: this is a top-level item'),
    ...(item.readiness.blockedByAncestorKey
      ? [
          `- Blocked through ancestor ${item.readiness.blockedByAncestorKey}${item.readiness.blockedByAncestorTitle ? `: ${item.readiness.blockedByAncestorTitle}` : ''}`,
        ]
      : []),
    '',
    '## Blockers',
    '### Done',
    list(done.map(blockerLine)),
    '### Open',
    list(open.map(blockerLine)),
    '',
    '## Labels',
    list(item.labels.map((l) => l.name)),
    '',
    '## Components',
    list(item.components.map((c) => c.name)),
    '',
    '## Target repositories',
    list(repos),
    '',
  ];

  if (ctx.closeOut) {
    sections.push(
      '## Close-out',
      `The cards of this scope have landed: ${ctx.closeOut.landedKeys.length > 0 ? ctx.closeOut.landedKeys.join(', ') : 'none'}.`,
      '',
      ctx.closeOut.prompt.trim(),
      '',
      `Work on branch \`${ctx.branch}\`; every commit message starts with \`${item.key}\`. Do not push.`,
    );
  } else {
    sections.push(...expectations(item, ctx));
  }
  if (ctx.workflow) sections.push(...workflowLines(ctx.workflow, ctx.mode));
  return `${sections.join('\n')}\n`;
}

/** The repository's own rules and check, as the agent should know them before it starts. */
function workflowLines(wf: NonNullable<PromptContext['workflow']>, mode: LegMode): string[] {
  const out: string[] = [];
  if (wf.verify && mode !== 'review') {
    out.push(
      '',
      '## The check',
      `When you are done, svc runs \`${wf.verify}\` in this directory; the card counts as done only when it exits 0. Run it yourself before you finish.`,
    );
  }
  if (wf.ports) {
    out.push(
      '',
      '## Ports',
      `Use only the port in \`$SVC_PORT\`${wf.ports > 1 ? ` and the ${wf.ports - 1} after it` : ''} for servers you start: other agents work beside you.`,
    );
  }
  if (wf.rules) out.push('', '## House rules (from the repository)', wf.rules.trim());
  return out;
}

/** The prompt of an attempt after a failed check: the card's prompt, then what the check said. */
export function checkFailedPrompt(prompt: string, failed: { command: string; outcome: string; output: string; attempt: number; of: number }): string {
  const longest = Math.max(2, ...(failed.output.match(/`+/g) ?? []).map((m) => m.length));
  const fence = '`'.repeat(longest + 1);
  return [
    prompt.trimEnd(),
    '',
    `## The check failed (attempt ${failed.attempt} of ${failed.of})`,
    `Your work is in this directory as you left it. svc ran \`${failed.command}\`: ${failed.outcome}. The last lines of its output:`,
    '',
    `${fence}text`,
    failed.output,
    fence,
    '',
    'Fix what it reports, commit as before, and run the check yourself before you finish.',
    '',
  ].join('\n');
}
