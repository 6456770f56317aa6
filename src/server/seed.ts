// `svc server --seed demo`: a small, realistic project to try every command against.
// Workspace `acme`, one user, project DEMO:
//   DEMO-1 epic "Checkout revamp"
//     DEMO-2 story "Guest checkout"
//       DEMO-3 subtask "Guest checkout API"
//       DEMO-4 subtask "Guest checkout form" (blocked by DEMO-3)
//       DEMO-5 subtask "Guest checkout tests"
//   DEMO-6 task "Upgrade the HTTP client" (standalone)
//   DEMO-7 bug "Totals round the wrong way"
//     DEMO-8 subtask "Fix rounding in totals"
//   DEMO-9 task "Write the changelog" (done)
//   DEMO-10 task "Approve the pricing copy" (executor: human)
import type { DatabaseSync } from 'node:sqlite';
import type { Admin } from './admin.js';

/**
 * Seeds the demo once. A database seeded before (`svc server --db svc.db --seed demo`, started
 * again) keeps its data as it is; the service stores only token hashes, so the earlier token
 * cannot be shown again: a fresh one for the demo user is minted and printed (earlier ones stay
 * valid).
 */
export function seedDemo(admin: Admin, db?: DatabaseSync): { token: string; workspaceId: string; userId: string; projectKey: string } {
  const existing = db
    ?.prepare(
      `SELECT w.id AS workspaceId, u.id AS userId FROM workspaces w JOIN projects p ON p.workspace_id = w.id AND p.key = 'DEMO'
       JOIN users u ON u.email = 'ada@acme.test' WHERE w.slug = 'acme'`,
    )
    .get() as { workspaceId: string; userId: string } | undefined;
  if (existing) {
    const { token } = admin.createToken({ workspaceId: existing.workspaceId, userId: existing.userId });
    return { token, ...existing, projectKey: 'DEMO' };
  }
  const ws = admin.createWorkspace({ name: 'Acme', slug: 'acme' });
  const user = admin.createUser({ name: 'Ada Demo', email: 'ada@acme.test' });
  admin.addMember(ws.id, user.id);
  admin.createProject({ workspaceId: ws.id, key: 'DEMO', name: 'Demo shop', accessMode: 'workspace' });
  const sprint = admin.createSprint({ projectKey: 'DEMO', name: 'Sprint 1', state: 'active' });
  const w = (fields: Omit<Parameters<Admin['createWorkItem']>[0], 'projectKey'>) =>
    admin.createWorkItem({ projectKey: 'DEMO', reporterId: user.id, ...fields }).key;

  const epic = w({ kind: 'epic', title: 'Checkout revamp', priority: 'high', labels: ['checkout'] });
  const story = w({ kind: 'story', title: 'Guest checkout', parentKey: epic, priority: 'high', sprintId: sprint.id, type: 'code' });
  const api = w({ kind: 'subtask', title: 'Guest checkout API', parentKey: story, type: 'code', components: ['api'] });
  w({ kind: 'subtask', title: 'Guest checkout form', parentKey: story, type: 'code', blockedBy: [api], components: ['web'] });
  w({ kind: 'subtask', title: 'Guest checkout tests', parentKey: story, type: 'test' });
  w({ kind: 'task', title: 'Upgrade the HTTP client', type: 'chore', priority: 'low' });
  const bug = w({ kind: 'bug', title: 'Totals round the wrong way', priority: 'highest', type: 'code' });
  w({ kind: 'subtask', title: 'Fix rounding in totals', parentKey: bug, type: 'code' });
  w({ kind: 'task', title: 'Write the changelog', status: 'done', type: 'content' });
  w({ kind: 'task', title: 'Approve the pricing copy', executor: 'human', type: 'review' });

  const { token } = admin.createToken({ workspaceId: ws.id, userId: user.id });
  return { token, workspaceId: ws.id, userId: user.id, projectKey: 'DEMO' };
}
