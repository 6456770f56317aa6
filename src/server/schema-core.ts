// Tables every module shares. Ids are short random strings; timestamps are ISO strings in UTC.
// A work item's key is `<project key>-<number>`; its number is allocated per project.
export const CORE_SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS workspaces (
  id TEXT PRIMARY KEY, name TEXT NOT NULL, slug TEXT NOT NULL UNIQUE, created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS users (
  id TEXT PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS memberships (
  workspace_id TEXT NOT NULL REFERENCES workspaces(id), user_id TEXT NOT NULL REFERENCES users(id),
  PRIMARY KEY (workspace_id, user_id));
CREATE TABLE IF NOT EXISTS projects (
  id TEXT PRIMARY KEY, workspace_id TEXT NOT NULL REFERENCES workspaces(id), key TEXT NOT NULL,
  name TEXT NOT NULL, access_mode TEXT NOT NULL DEFAULT 'workspace', archived INTEGER NOT NULL DEFAULT 0,
  next_number INTEGER NOT NULL DEFAULT 1, UNIQUE (workspace_id, key));
CREATE TABLE IF NOT EXISTS tokens (
  id TEXT PRIMARY KEY, hash TEXT NOT NULL UNIQUE, user_id TEXT NOT NULL REFERENCES users(id),
  workspace_id TEXT NOT NULL REFERENCES workspaces(id), project_id TEXT REFERENCES projects(id),
  scopes TEXT NOT NULL, created_at TEXT NOT NULL, expires_at TEXT, revoked_at TEXT);
CREATE TABLE IF NOT EXISTS work_items (
  id TEXT PRIMARY KEY, project_id TEXT NOT NULL REFERENCES projects(id), number INTEGER NOT NULL,
  key TEXT NOT NULL, kind TEXT NOT NULL, type TEXT, title TEXT NOT NULL, description_md TEXT,
  status TEXT NOT NULL DEFAULT 'todo', priority TEXT NOT NULL DEFAULT 'medium',
  parent_id TEXT REFERENCES work_items(id), assignee_id TEXT, reporter_id TEXT NOT NULL,
  due_date TEXT, estimate_minutes INTEGER, story_points REAL, executor TEXT,
  sprint_id TEXT, folder_id TEXT, rank TEXT, target_repo TEXT,
  target_repos TEXT NOT NULL DEFAULT '[]', target_repositories TEXT NOT NULL DEFAULT '[]',
  labels TEXT NOT NULL DEFAULT '[]', components TEXT NOT NULL DEFAULT '[]',
  deliveries TEXT NOT NULL DEFAULT '[]', extra TEXT NOT NULL DEFAULT '{}',
  comment_count INTEGER NOT NULL DEFAULT 0, version INTEGER NOT NULL DEFAULT 1,
  archived_at TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
  UNIQUE (project_id, number));
CREATE INDEX IF NOT EXISTS work_items_by_key ON work_items (key);
-- (parent_id, archived_at): "has live children" (leaves, the ready lanes, child counts) is read
-- from the index alone; it replaces the plain parent_id index of older databases.
DROP INDEX IF EXISTS work_items_by_parent;
CREATE INDEX IF NOT EXISTS work_items_by_live_parent ON work_items (parent_id, archived_at);
CREATE INDEX IF NOT EXISTS work_items_by_project ON work_items (project_id, created_at, id);
-- The bug trees of the ready lanes and kind filters (a count of open bugs over 50k items: 10 -> 2 ms).
CREATE INDEX IF NOT EXISTS work_items_by_kind ON work_items (project_id, kind);
-- kind: blocks (from blocks to), relates, duplicates, clones
CREATE TABLE IF NOT EXISTS work_item_links (
  from_id TEXT NOT NULL REFERENCES work_items(id), to_id TEXT NOT NULL REFERENCES work_items(id),
  kind TEXT NOT NULL, PRIMARY KEY (from_id, to_id, kind));
CREATE INDEX IF NOT EXISTS links_to ON work_item_links (to_id, kind);
CREATE TABLE IF NOT EXISTS sprints (
  id TEXT PRIMARY KEY, project_id TEXT NOT NULL REFERENCES projects(id), name TEXT NOT NULL,
  state TEXT NOT NULL DEFAULT 'future', starts_at TEXT, ends_at TEXT);
`;

// Members of a project whose accessMode is `members` (workspace members outside it cannot browse it).
export const PROJECT_MEMBERS_SCHEMA = `
CREATE TABLE IF NOT EXISTS project_members (
  project_id TEXT NOT NULL REFERENCES projects(id), user_id TEXT NOT NULL REFERENCES users(id),
  PRIMARY KEY (project_id, user_id));
CREATE INDEX IF NOT EXISTS work_items_by_sprint ON work_items (sprint_id);
`;
