// Which planning dependency a database uses, and its workspaces' AI credits. Both are set in the
// product on the real service; here by the admin functions (seed, tests, `svc server` flags).
//
// Planner resolution: the database's own setting (configurePlanner) wins; without one the
// environment decides: SVC_PLANNER_CMD=builtin selects the built-in planner, any other non-blank
// value is the agent command, unset or blank means no dependency (submissions answer 503).
import type { Database } from '../db.js';

export type PlannerSetting = { kind: 'builtin' } | { kind: 'command'; command: string } | { kind: 'none' };

const SETTING = 'planner';

/** Admin: fixes the planner of this database; null returns to the environment's choice. */
export function configurePlanner(db: Database, setting: PlannerSetting | null): void {
  if (setting === null) db.prepare('DELETE FROM planning_settings WHERE name = ?').run(SETTING);
  else {
    db.prepare('INSERT INTO planning_settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value').run(
      SETTING,
      JSON.stringify(setting),
    );
  }
}

/** The planner in force, or null when none is configured or the configuration is unusable. */
export function currentPlanner(db: Database, env: NodeJS.ProcessEnv = process.env): Exclude<PlannerSetting, { kind: 'none' }> | null {
  const row = db.prepare('SELECT value FROM planning_settings WHERE name = ?').get(SETTING) as { value: string } | undefined;
  let setting: PlannerSetting;
  if (row) setting = JSON.parse(row.value) as PlannerSetting;
  else {
    const cmd = (env.SVC_PLANNER_CMD ?? '').trim();
    setting = cmd === '' ? { kind: 'none' } : cmd === 'builtin' ? { kind: 'builtin' } : { kind: 'command', command: cmd };
  }
  if (setting.kind === 'none') return null;
  if (setting.kind === 'command' && setting.command.trim() === '') return null;
  return setting;
}

/** Stored on the job so a later configuration change does not alter a job already submitted. */
export const describePlanner = (p: Exclude<PlannerSetting, { kind: 'none' }>): string => (p.kind === 'builtin' ? 'builtin' : `command:${p.command}`);

/**
 * Admin: sets a workspace's remaining AI credits (each submission spends one); null removes the
 * counter, and a workspace without one is unlimited.
 */
export function setPlanCredits(db: Database, workspaceId: string, remaining: number | null): void {
  if (remaining === null) db.prepare('DELETE FROM plan_credits WHERE workspace_id = ?').run(workspaceId);
  else {
    if (!Number.isSafeInteger(remaining) || remaining < 0) throw new Error('credits must be a whole number >= 0');
    db.prepare('INSERT INTO plan_credits (workspace_id, remaining) VALUES (?, ?) ON CONFLICT (workspace_id) DO UPDATE SET remaining = excluded.remaining').run(
      workspaceId,
      remaining,
    );
  }
}

/** Remaining credits, or null for unlimited. */
export function planCredits(db: Database, workspaceId: string): number | null {
  const row = db.prepare('SELECT remaining FROM plan_credits WHERE workspace_id = ?').get(workspaceId) as { remaining: number } | undefined;
  return row ? row.remaining : null;
}

/** Spends one credit; false (and nothing spent) when the workspace has none left. */
export function spendCredit(db: Database, workspaceId: string): boolean {
  const left = planCredits(db, workspaceId);
  if (left === null) return true;
  if (left <= 0) return false;
  db.prepare('UPDATE plan_credits SET remaining = remaining - 1 WHERE workspace_id = ?').run(workspaceId);
  return true;
}
