// The folders table and the reads every folder operation shares. A folder belongs to one project;
// `parent_id` null means the project root. Sibling order is `position` (see positions.ts), and
// sibling names are unique case-insensitively, which is checked here in code because SQLite's
// lower() folds ASCII only.
import type { Folder } from '../../contract/types.js';
import type { Database } from '../db.js';
import { projectById } from '../core/access.js';
import { ServiceError, type Principal } from '../kernel.js';

export const FOLDERS_SCHEMA = `
CREATE TABLE IF NOT EXISTS folders (
  id TEXT PRIMARY KEY, project_id TEXT NOT NULL REFERENCES projects(id),
  parent_id TEXT REFERENCES folders(id), name TEXT NOT NULL, position TEXT NOT NULL,
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS folders_by_parent ON folders (project_id, parent_id, position);
`;

/** Longest folder name after trimming (the contract's limits). */
export const FOLDER_NAME_MAX = 120;

export interface FolderRow {
  id: string;
  project_id: string;
  parent_id: string | null;
  name: string;
  position: string;
  created_at: string;
  updated_at: string;
}

/** A folder row plus what reach checks need about its project. */
export interface LocatedFolder extends FolderRow {
  project_key: string;
  workspace_id: string;
}

export function getFolderRow(db: Database, id: string): LocatedFolder | undefined {
  return db
    .prepare(
      `SELECT f.*, p.key AS project_key, p.workspace_id
         FROM folders f JOIN projects p ON p.id = f.project_id WHERE f.id = ?`,
    )
    .get(id) as LocatedFolder | undefined;
}

/** Children of `parentId` (null: the root) in tree order. */
export function childFolders(db: Database, projectId: string, parentId: string | null): FolderRow[] {
  return db.prepare(`SELECT * FROM folders WHERE project_id = ? AND parent_id IS ? ORDER BY position, id`).all(projectId, parentId) as unknown as FolderRow[];
}

/** Names from the root down to and including the folder itself. */
export function folderPath(db: Database, folder: FolderRow): string[] {
  const path = [folder.name];
  let parentId = folder.parent_id;
  const seen = new Set([folder.id]);
  while (parentId !== null && !seen.has(parentId)) {
    seen.add(parentId);
    const parent = db.prepare('SELECT id, name, parent_id FROM folders WHERE id = ?').get(parentId) as Pick<FolderRow, 'id' | 'name' | 'parent_id'> | undefined;
    if (!parent) break;
    path.unshift(parent.name);
    parentId = parent.parent_id;
  }
  return path;
}

export function toFolder(db: Database, row: FolderRow, projectKey: string): Folder {
  return {
    id: row.id,
    projectKey,
    parentFolderId: row.parent_id,
    name: row.name,
    path: folderPath(db, row),
    position: row.position,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** The trimmed name, or INVALID_FOLDER_NAME when empty or too long. */
export function validFolderName(raw: string): string {
  const name = raw.trim();
  if (name.length === 0 || [...name].length > FOLDER_NAME_MAX) {
    throw new ServiceError(422, 'INVALID_FOLDER_NAME', `folder name must be 1 to ${FOLDER_NAME_MAX} characters after trimming`);
  }
  return name;
}

const fold = (name: string) => name.toLocaleLowerCase('und');

/** True when a sibling under `parentId` (other than `exceptId`) has this name, ignoring case. */
export function nameTaken(db: Database, projectId: string, parentId: string | null, name: string, exceptId: string | null = null): boolean {
  const wanted = fold(name);
  return childFolders(db, projectId, parentId).some((f) => f.id !== exceptId && fold(f.name) === wanted);
}

export const nameTakenError = (name: string) =>
  new ServiceError(409, 'FOLDER_NAME_TAKEN', `a sibling folder is already named ${JSON.stringify(name)} (names compare case-insensitively)`);

/**
 * True when the caller may browse the folder's project (its workspace, a narrowed token's one
 * project, membership of a `members` project). Anything else is answered like a missing folder.
 */
export function inReach(db: Database, principal: Principal, folder: LocatedFolder): boolean {
  return projectById(db, principal, folder.project_id) !== null;
}

/**
 * Resolves a folder id given as a destination or anchor within `projectId`: FOLDER_NOT_FOUND when
 * the caller cannot see it, CROSS_PROJECT_FOLDER when it is a visible folder of another project.
 */
export function folderInProject(db: Database, principal: Principal, projectId: string, folderId: string, role: string): LocatedFolder {
  const folder = getFolderRow(db, folderId);
  if (!folder || !inReach(db, principal, folder)) {
    throw new ServiceError(404, 'FOLDER_NOT_FOUND', `${role} ${folderId} is not a folder of this project`);
  }
  if (folder.project_id !== projectId) {
    throw new ServiceError(422, 'CROSS_PROJECT_FOLDER', `${role} ${folderId} belongs to another project`);
  }
  return folder;
}
