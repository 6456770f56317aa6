// Offline use without the demo seed (docs/service.md): `svc server init` makes (or finds) a workspace
// and a project and mints a token; `svc server delivery` records a pull request on an item, so
// `review` and `fix` have something to select. Both write the database file directly (a running
// server sees the change at once), outside /api/v1, as the real service's product UI would.
import { DELIVERY_CI, DELIVERY_STATES, KEY_PATTERN, type Delivery } from '../contract/types.js';
import { createAdmin } from './admin.js';
import { transaction, type Database } from './db.js';
import { rowByKey } from './work-items/rows.js';
import { projectReposMeta, updateColumns } from './work-items/store.js';

/** The refusal of an init or delivery: one line for the user, and its exit code. */
export class InitError extends Error {
  constructor(
    message: string,
    readonly exitCode: 2 | 4,
  ) {
    super(message);
  }
}

export interface InitRequest {
  workspace: string;
  project: string;
  name?: string;
  repos?: readonly string[];
}

/**
 * Makes what is missing (the workspace named by its slug, one member, the project) and mints a
 * personal access token of that member. Run again it finds them and only mints a fresh token;
 * `--repo` given again replaces the project's repositories (and fills items that name none).
 */
export function initProject(db: Database, req: InitRequest, now: () => Date = () => new Date()): { token: string; created: string[] } {
  if (!/^[a-z0-9][a-z0-9-]*$/.test(req.workspace)) {
    throw new InitError(`--workspace takes a slug of lowercase letters, digits and dashes, got '${req.workspace}'`, 2);
  }
  if (!/^[A-Z][A-Z0-9]*$/.test(req.project)) throw new InitError(`--project takes a key of capital letters and digits (PROJ), got '${req.project}'`, 2);
  const repos = [...new Set((req.repos ?? []).map((r) => r.trim()).filter(Boolean))];
  const admin = createAdmin(db, now);
  return transaction(db, () => {
    const created: string[] = [];
    let ws = db.prepare('SELECT id FROM workspaces WHERE slug = ?').get(req.workspace) as { id: string } | undefined;
    if (!ws) {
      ws = admin.createWorkspace({ name: req.workspace, slug: req.workspace });
      created.push(`workspace ${req.workspace}`);
    }
    let user = db.prepare('SELECT user_id AS id FROM memberships WHERE workspace_id = ? ORDER BY rowid LIMIT 1').get(ws.id) as { id: string } | undefined;
    if (!user) {
      const email = `owner@${req.workspace}.svc.local`;
      user =
        (db.prepare('SELECT id FROM users WHERE email = ?').get(email) as { id: string } | undefined) ??
        admin.createUser({ name: `${req.workspace} owner`, email });
      admin.addMember(ws.id, user.id);
    }
    let project = db.prepare('SELECT id FROM projects WHERE key = ? AND workspace_id = ?').get(req.project, ws.id) as { id: string } | undefined;
    if (!project) {
      project = admin.createProject({ workspaceId: ws.id, key: req.project, name: req.name ?? req.project });
      created.push(`project ${req.project}`);
    }
    if (repos.length) setProjectRepositories(db, project.id, repos, now());
    const { token } = admin.createToken({ workspaceId: ws.id, userId: user.id });
    return { token, created };
  });
}

function setProjectRepositories(db: Database, projectId: string, repos: string[], now: Date): void {
  db.prepare('INSERT INTO meta (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value').run(
    projectReposMeta(projectId),
    JSON.stringify(repos),
  );
  const bare = db
    .prepare(`SELECT id FROM work_items WHERE project_id = ? AND target_repo IS NULL AND target_repos = '[]' AND target_repositories = '[]'`)
    .all(projectId) as { id: string }[];
  for (const { id } of bare) updateColumns(db, id, { target_repos: JSON.stringify(repos) }, now);
}

export interface DeliveryRequest {
  key: string;
  number: number;
  state?: string;
  ci?: string;
  url?: string;
}

/**
 * Records a pull request on an item: the delivery of the same repository and number is replaced,
 * any other is kept. Its repository is the item's first target repository, else `local`; its URL
 * (unless given) is that repository's `/pull/N` on github.com, which `fix` fetches as `svc/KEY`
 * from an `origin` on another host.
 */
export function recordDelivery(db: Database, req: DeliveryRequest, now: () => Date = () => new Date()): Delivery {
  if (!KEY_PATTERN.test(req.key)) throw new InitError(`not a work item key: ${req.key}`, 2);
  if (!Number.isInteger(req.number) || req.number < 1) throw new InitError(`--number takes a pull request number (1 or more), got '${req.number}'`, 2);
  const state = req.state ?? 'open';
  if (!(DELIVERY_STATES as readonly string[]).includes(state)) throw new InitError(`--state takes ${DELIVERY_STATES.join(', ')}, got '${state}'`, 2);
  if (req.ci !== undefined && !(DELIVERY_CI as readonly string[]).includes(req.ci))
    throw new InitError(`--ci takes ${DELIVERY_CI.join(', ')}, got '${req.ci}'`, 2);
  if (req.url !== undefined && !/^https?:\/\/\S+$/.test(req.url)) throw new InitError(`--url takes an http(s) address, got '${req.url}'`, 2);
  return transaction(db, () => {
    const row = rowByKey(db, req.key);
    if (!row) throw new InitError(`no work item ${req.key} in this database`, 4);
    const targets = [
      ...(JSON.parse(row.target_repositories) as string[]),
      ...(JSON.parse(row.target_repos) as string[]),
      ...(row.target_repo ? [row.target_repo] : []),
    ];
    const repo = targets[0] ?? 'local';
    const web = /^[\w.-]+\/[\w.-]+$/.test(repo)
      ? `https://github.com/${repo}`
      : /^https?:\/\//.test(repo)
        ? repo.replace(/\.git$/, '')
        : `https://github.com/local/${row.key.split('-')[0]!.toLowerCase()}`;
    const delivery: Delivery = {
      repo,
      number: req.number,
      title: row.title,
      url: req.url ?? `${web}/pull/${req.number}`,
      state: state as Delivery['state'],
      ci: (req.ci ?? null) as Delivery['ci'],
      baseRef: null,
      defaultBranch: 'main',
    };
    const others = (JSON.parse(row.deliveries) as Delivery[]).filter((d) => !(d.repo === repo && d.number === req.number));
    updateColumns(db, row.id, { deliveries: JSON.stringify([...others, delivery]) }, now());
    return delivery;
  });
}
