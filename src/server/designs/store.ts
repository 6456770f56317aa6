// Designs: a design card of a project with its assets (files kept in a repository). The contract
// shows only the listing (listDesigns) and leaves the row shape open; the local service's row is
// `DesignRow` below. Designs are created and approved in the product, so here only through the
// admin functions (seed, tests).
import type { Database } from '../db.js';
import { iso, newId } from '../ids.js';

export const DESIGNS_SCHEMA = `
CREATE TABLE IF NOT EXISTS designs (
  id TEXT PRIMARY KEY, project_id TEXT NOT NULL REFERENCES projects(id), title TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'draft', work_item_id TEXT REFERENCES work_items(id),
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL, approved_at TEXT);
CREATE INDEX IF NOT EXISTS designs_by_project ON designs (project_id, status, created_at);
CREATE TABLE IF NOT EXISTS design_assets (
  id TEXT PRIMARY KEY, design_id TEXT NOT NULL REFERENCES designs(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL, name TEXT NOT NULL, repository TEXT, source_path TEXT,
  media_type TEXT, size_bytes INTEGER);
CREATE INDEX IF NOT EXISTS design_assets_by_design ON design_assets (design_id, seq);
`;

/** Review states of a design; only `approved` designs are listed. */
export const DESIGN_STATUSES = ['draft', 'in_review', 'approved', 'rejected'] as const;
export type DesignStatus = (typeof DESIGN_STATUSES)[number];

/** An asset as listed: where it lives in the repository, never a download link. */
export interface DesignAsset {
  id: string;
  name: string;
  repository: string | null;
  sourcePath: string | null;
  mediaType: string | null;
  sizeBytes: number | null;
}

/** A row of listDesigns. */
export interface DesignRow {
  id: string;
  title: string;
  status: string;
  workItemKey: string | null;
  createdAt: string;
  updatedAt: string;
  approvedAt: string | null;
  assets: DesignAsset[];
}

export interface DesignRecord {
  id: string;
  project_id: string;
  title: string;
  status: string;
  work_item_key: string | null;
  created_at: string;
  updated_at: string;
  approved_at: string | null;
}

interface AssetRecord {
  id: string;
  design_id: string;
  name: string;
  repository: string | null;
  source_path: string | null;
  media_type: string | null;
  size_bytes: number | null;
}

/** Rows with their assets, loaded in one query per page. */
export function toDesignRows(db: Database, records: readonly DesignRecord[]): DesignRow[] {
  const byDesign = new Map<string, DesignAsset[]>(records.map((r) => [r.id, []]));
  if (records.length > 0) {
    const assets = db
      .prepare(`SELECT * FROM design_assets WHERE design_id IN (${records.map(() => '?').join(',')}) ORDER BY design_id, seq`)
      .all(...records.map((r) => r.id)) as unknown as AssetRecord[];
    for (const a of assets) {
      byDesign.get(a.design_id)?.push({
        id: a.id,
        name: a.name,
        repository: a.repository,
        sourcePath: a.source_path,
        mediaType: a.media_type,
        sizeBytes: a.size_bytes,
      });
    }
  }
  return records.map((r) => ({
    id: r.id,
    title: r.title,
    status: r.status,
    workItemKey: r.work_item_key,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    approvedAt: r.approved_at,
    assets: byDesign.get(r.id) ?? [],
  }));
}

export interface DesignAssetInput {
  name: string;
  /** `owner/name` of the repository holding the file. */
  repository?: string | null;
  /** Path of the file inside the repository; listDesigns's `pathPrefix` matches it. */
  sourcePath?: string | null;
  mediaType?: string | null;
  sizeBytes?: number | null;
}

export interface DesignInput {
  projectId: string;
  title: string;
  status?: DesignStatus;
  /** Internal id of the work item the design card belongs to, if any. */
  workItemId?: string | null;
  assets?: DesignAssetInput[];
  /** Creation time (seed data spreads designs over time); default now. */
  createdAt?: Date;
}

/** Admin: creates a design with its assets and returns its id. */
export function createDesign(db: Database, input: DesignInput, now: Date = new Date()): string {
  const id = newId('dsn');
  const created = iso(input.createdAt ?? now);
  const status = input.status ?? 'draft';
  if (!DESIGN_STATUSES.includes(status)) throw new Error(`unknown design status ${status}`);
  db.prepare(
    `INSERT INTO designs (id, project_id, title, status, work_item_id, created_at, updated_at, approved_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(id, input.projectId, input.title, status, input.workItemId ?? null, created, created, status === 'approved' ? created : null);
  const add = db.prepare(
    `INSERT INTO design_assets (id, design_id, seq, name, repository, source_path, media_type, size_bytes)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  (input.assets ?? []).forEach((a, i) =>
    add.run(newId('dsa'), id, i, a.name, a.repository ?? null, a.sourcePath ?? null, a.mediaType ?? null, a.sizeBytes ?? null),
  );
  return id;
}

/** Admin: moves a design to another review state (`approved` stamps approvedAt). */
export function setDesignStatus(db: Database, designId: string, status: DesignStatus, now: Date = new Date()): void {
  if (!DESIGN_STATUSES.includes(status)) throw new Error(`unknown design status ${status}`);
  const at = iso(now);
  const result = db
    .prepare(
      `UPDATE designs SET status = ?, updated_at = ?,
              approved_at = CASE WHEN ? = 'approved' THEN ? ELSE NULL END WHERE id = ?`,
    )
    .run(status, at, status, at, designId);
  if (result.changes === 0) throw new Error(`no design ${designId}`);
}
