// getCloseOutPrompt: the close-out prompt of a scoped run. After the legs, the client runs one more
// agent in the scope's branch (docs/dispatch.md, run_scope); this text tells that agent what landed
// and what integrating it means. It writes nothing and may be asked while the run is still open.
import type { CloseOutPrompt } from '../../contract/types.js';
import type { Database } from '../db.js';
import { ServiceError, type Reply, type RequestContext } from '../kernel.js';
import { runForCaller, type RunRow } from './store.js';

interface Landed {
  key: string;
  title: string;
  branch: string;
}

/** The client's branch convention: each card works on `svc/<KEY>` (docs/agents.md). */
export const branchOf = (key: string): string => `svc/${key}`;

export function buildCloseOutPrompt(db: Database, run: RunRow): CloseOutPrompt {
  if (!run.scope_work_item_id) {
    throw new ServiceError(422, 'NO_RUN_TARGET', 'this run was not launched with a scope, so it has no close-out target');
  }
  const scope = db.prepare('SELECT key, title, description_md FROM work_items WHERE id = ?').get(run.scope_work_item_id) as {
    key: string;
    title: string;
    description_md: string | null;
  };
  const landed = (
    db
      .prepare(
        `SELECT c.work_item_key AS key, w.title, c.session_branch AS branch
           FROM dispatch_cards c JOIN work_items w ON w.id = c.work_item_id
          WHERE c.run_id = ? AND c.disposition = 'implemented' ORDER BY c.position`,
      )
      .all(run.id) as unknown as { key: string; title: string; branch: string | null }[]
  ).map((l): Landed => ({ key: l.key, title: l.title, branch: l.branch ?? branchOf(l.key) }));
  return {
    runId: run.id,
    targetKey: scope.key,
    prompt: promptText(run.id, scope, landed),
    landedKeys: landed.map((l) => l.key),
  };
}

function promptText(runId: string, scope: { key: string; title: string; description_md: string | null }, landed: Landed[]): string {
  const target = branchOf(scope.key);
  const lines = [`Close out dispatch run ${runId} for ${scope.key} "${scope.title}".`, ''];
  if (scope.description_md?.trim()) lines.push(`What ${scope.key} asks for:`, scope.description_md.trim(), '');
  if (landed.length === 0) {
    lines.push(
      `No leg of this run landed, so there is nothing to integrate under ${scope.key}.`,
      `Check out branch ${target}, confirm it builds and its tests pass, and report what is still missing; change nothing else.`,
    );
    return lines.join('\n');
  }
  lines.push(`These legs landed, each committed on its own branch:`);
  for (const l of landed) lines.push(`- ${l.key} "${l.title}" on branch ${l.branch}`);
  lines.push(
    '',
    `Integrate them under ${scope.key}:`,
    `1. Work on branch ${target} (create it from the default branch if it does not exist).`,
    `2. Merge each landed branch above into ${target}, in the order listed, resolving conflicts so every leg's intent survives.`,
    `3. Build the project and run its tests; fix what the combination broke.`,
    `4. Verify that together the legs deliver ${scope.key}; note anything it asks for that no leg covered.`,
    `5. Commit on ${target} with a message starting with "${scope.key}". Do not change any work item's status.`,
  );
  return lines.join('\n');
}

export function closeOutPromptRoute(ctx: RequestContext): Reply {
  const run = runForCaller(ctx.db, ctx.principal, ctx.params.id ?? '');
  return { status: 200, body: buildCloseOutPrompt(ctx.db, run) };
}
