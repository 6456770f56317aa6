import { describe, expect, it } from 'vitest';
import type { LinkItem, WorkItemDetail } from '../../src/contract/types.js';
import { buildPrompt, checkFailedPrompt, expectsCode } from '../../src/dispatch/prompt.js';

function link(key: string, title: string, status: string, statusCategory?: 'done' | 'todo' | 'in_progress'): LinkItem {
  return {
    key,
    kind: 'task',
    title,
    status,
    priority: 'medium',
    assigneeId: null,
    estimateMinutes: null,
    storyPoints: null,
    parentKey: null,
    archived: false,
    ...(statusCategory ? { statusCategory } : {}),
  };
}

function item(over: Partial<WorkItemDetail> = {}): WorkItemDetail {
  return {
    key: 'SVC-42',
    kind: 'task',
    type: 'code',
    title: 'Add retry to the uploader',
    status: 'To Do',
    statusCategory: 'todo',
    priority: 'high',
    assigneeId: null,
    reporterId: 'u1',
    dueDate: null,
    estimateMinutes: null,
    storyPoints: 3,
    createdAt: '2026-11-01T00:00:00Z',
    updatedAt: '2026-11-02T00:00:00Z',
    dependencies: { blockedBy: [], blocks: [] },
    descriptionMd: 'Uploads fail on 503.\n\nRetry with backoff.',
    parentKey: 'SVC-10',
    ancestorKeys: ['SVC-1', 'SVC-10'],
    children: [],
    links: {
      blockedBy: [
        link('SVC-5', 'Define the error model', 'Done', 'done'),
        link('SVC-6', 'Metrics for uploads', 'Closed'),
        link('SVC-7', 'Feature flag', 'In Progress', 'in_progress'),
      ],
      blocks: [],
      relatesTo: [],
      duplicates: [],
      clones: [],
    },
    readiness: {
      ready: false,
      openBlockers: [link('SVC-7', 'Feature flag', 'In Progress', 'in_progress')],
      blockedByAncestorKey: null,
      blockedByAncestorTitle: null,
    },
    labels: [{ name: 'backend' }, { name: 'reliability' }],
    components: [{ name: 'uploader' }],
    commentCount: 0,
    sprintId: null,
    targetRepo: null,
    targetRepos: [],
    targetRepositories: [{ ref: 'acme/uploader', name: 'uploader', role: 'service', label: null, state: 'active', primary: true }],
    executor: 'coding_agent',
    planningSource: null,
    implementationSource: null,
    planningHarness: null,
    planningModel: null,
    implementationHarness: null,
    implementationModel: null,
    archivedAt: null,
    deliveries: [
      {
        repo: 'acme/uploader',
        number: 17,
        title: 'SVC-42: retry',
        url: 'https://git.example/acme/uploader/pull/17',
        state: 'open',
        ci: 'failing',
        baseRef: 'main',
        defaultBranch: 'main',
      },
    ],
    ...over,
  };
}

const ctx = { branch: 'svc/SVC-42', runId: 'run-7', mode: 'implement' as const, expectsCode: true };

describe('buildPrompt', () => {
  it('contains every required section of the prompt in docs/agents.md', () => {
    const text = buildPrompt(item(), { ...ctx, ancestors: new Map([['SVC-1', { key: 'SVC-1', title: 'Reliable uploads', kind: 'epic' }]]) });
    expect(text).toContain('# SVC-42: Add retry to the uploader');
    expect(text).toContain('- Kind: task');
    expect(text).toContain('- Type: code');
    expect(text).toContain('Uploads fail on 503.\n\nRetry with backoff.');
    // Ancestors root first; titles where known, keys otherwise.
    expect(text).toMatch(/## Ancestors \(root first\)\n- SVC-1 \(epic\): Reliable uploads\n- SVC-10\n/);
    expect(text).toMatch(/### Done\n- SVC-5: Define the error model \(Done\)\n- SVC-6: Metrics for uploads \(Closed\)\n/);
    expect(text).toMatch(/### Open\n- SVC-7: Feature flag \(In Progress\)\n\n/);
    expect(text).toMatch(/## Labels\n- backend\n- reliability\n/);
    expect(text).toMatch(/## Components\n- uploader\n/);
    expect(text).toContain('- uploader (acme/uploader, service, primary)');
    expect(text).toContain('Commit on branch `svc/SVC-42`; every commit message starts with `SVC-42`');
    expect(text).toContain('leave at least one commit');
  });

  it('says so when a card needs no code, and shows empty sections as none', () => {
    const text = buildPrompt(
      item({ type: 'research', labels: [], components: [], ancestorKeys: [], descriptionMd: null, targetRepositories: [], targetRepo: 'acme/docs' }),
      { ...ctx, expectsCode: false },
    );
    expect(text).toContain('(no description)');
    expect(text).toContain('- none: this is a top-level item');
    expect(text).toMatch(/## Labels\n- none\n/);
    expect(text).toMatch(/## Target repositories\n- acme\/docs\n/);
    expect(text).toContain('may need no code change');
    expect(text).not.toContain('leave at least one commit');
  });

  it('fix: names the failing pull request and says to fix it on its branch', () => {
    const text = buildPrompt(item(), { ...ctx, mode: 'fix' });
    expect(text).toContain('## Your task: fix the failing delivery');
    expect(text).toContain('- Pull request: #17 SVC-42: retry');
    expect(text).toContain('- URL: https://git.example/acme/uploader/pull/17');
    expect(text).toContain('- Branch: `svc/SVC-42` (into `main`)');
    expect(text).toContain('CI: failing');
    expect(text).toContain('fix it on its branch `svc/SVC-42`');
  });

  it('review: names the open pull request and forbids changes', () => {
    const text = buildPrompt(item({ deliveries: [{ ...item().deliveries[0]!, ci: 'passing' }] }), { ...ctx, mode: 'review' });
    expect(text).toContain('## Your task: review');
    expect(text).toContain('- Pull request: #17');
    expect(text).toContain('Review only, change nothing');
    expect(text).not.toContain('Commit on branch');
  });

  it('close-out: carries the service prompt and the landed keys', () => {
    const text = buildPrompt(item(), { ...ctx, closeOut: { prompt: 'Write the release note for the scope.', landedKeys: ['SVC-5', 'SVC-6'] } });
    expect(text).toContain('## Close-out');
    expect(text).toContain('SVC-5, SVC-6');
    expect(text).toContain('Write the release note for the scope.');
  });
});

describe('expectsCode', () => {
  it.each([
    ['code', true],
    ['test', true],
    [null, true],
    ['design', false],
    ['research', false],
    ['review', false],
    ['something-new', false],
  ] as const)('type %s → %s', (type, expected) => {
    expect(expectsCode({ type })).toBe(expected);
  });
});

describe('the workflow in the prompt (.svc/workflow.yml)', () => {
  it('names the check, the ports and the house rules, after what is expected', () => {
    const text = buildPrompt(item(), { ...ctx, workflow: { rules: 'Use pnpm.\n', verify: 'pnpm test', ports: 2 } });
    expect(text.indexOf('## What is expected')).toBeLessThan(text.indexOf('## The check'));
    expect(text).toContain('svc runs `pnpm test` in this directory; the card counts as done only when it exits 0');
    expect(text).toContain('Use only the port in `$SVC_PORT` and the 1 after it');
    expect(text).toMatch(/## House rules \(from the repository\)\nUse pnpm\.\n$/);
  });

  it('a review is told of no check (it runs none), and no workflow adds nothing', () => {
    expect(buildPrompt(item(), { ...ctx, mode: 'review', workflow: { rules: null, verify: 'pnpm test', ports: 0 } })).not.toContain('## The check');
    expect(buildPrompt(item(), ctx)).not.toMatch(/## The check|## Ports|## House rules/);
  });

  it('an attempt after a failed check ends with its output, in a fence no output can close', () => {
    const output = 'FAIL src/a.test.ts\n```\nexpected 1, got 2';
    const text = checkFailedPrompt('# SVC-42: the card\n', { command: 'npm test', outcome: 'exit 1', output, attempt: 2, of: 3 });
    expect(text.startsWith('# SVC-42: the card\n\n## The check failed (attempt 2 of 3)\n')).toBe(true);
    expect(text).toContain('svc ran `npm test`: exit 1.');
    expect(text).toContain(`\`\`\`\`text\n${output}\n\`\`\`\`\n`);
  });
});
