// The seam every module of the local service is written against: a route answers one operation of
// the contract, given the authenticated principal and the store. The HTTP layer (app.ts) does auth,
// scopes, rate limit, headers, body parsing, request-body validation against the contract document
// and error mapping once, so a module only holds its operation's own rules.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DatabaseSync } from 'node:sqlite';
import type { OperationId } from '../contract/operations.js';
import type { ErrorCode, Scope } from '../contract/types.js';

/** Who is calling: a personal access token, or a hosted run's own credential. */
export type Principal =
  | {
      kind: 'pat';
      tokenId: string;
      userId: string;
      workspaceId: string;
      /** Set when the token is narrowed to one project (the project's internal id). */
      projectId: string | null;
      scopes: Scope[];
    }
  | { kind: 'run'; runId: string; workspaceId: string; projectId: string };

export interface ServiceConfig {
  /** Silence after which the reaper closes a local run `abandoned`, in ms (contract: 5 minutes). */
  reapAfterMs: number;
  /** How often the reaper looks, in ms. */
  reapEveryMs: number;
  /** Rate limit: requests per window per token. */
  rateLimit: number;
  rateWindowMs: number;
  /** Lifetime of git installation tokens minted by getGitCredential, in ms (default one hour). */
  gitTokenTtlMs: number;
  /** The service's own address, once listening (for URLs it hands out). */
  baseUrl: string;
  /**
   * Folder of the bare repositories the smart-HTTP git remote serves (`<gitRoot>/owner/name.git`).
   * Unset: the remote answers 404 for every repository.
   */
  gitRoot?: string;
}

export interface RequestContext {
  operationId: OperationId;
  params: Record<string, string>;
  query: URLSearchParams;
  /** Parsed JSON body, already validated against the contract's request schema. */
  body: unknown;
  headers: Record<string, string | string[] | undefined>;
  principal: Principal;
  db: DatabaseSync;
  config: ServiceConfig;
  now(): Date;
  /** Signs and checks paging cursors scoped to a collection (see docs/service.md). */
  cursors: CursorCodec;
}

export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface Route {
  operationId: OperationId;
  handle(ctx: RequestContext): Reply | Promise<Reply>;
}

/** A slice of the service: its tables and its routes. */
export interface ServiceModule {
  name: string;
  /**
   * The module's tables as migration 1 had them (migrations.ts). It stays as it is; a later change
   * to a module's tables is a new numbered entry in migrations.ts.
   */
  schema: string;
  routes: Route[];
  /**
   * Paths outside /api/v1 this module answers itself (the smart-HTTP git remote under `/git/`):
   * the app hands over the raw request with no auth, rate limit or JSON handling of its own.
   */
  raw?: RawHandler[];
  /** Background work (the reaper), started with the server and stopped with it. */
  start?(deps: { db: DatabaseSync; config: ServiceConfig; now(): Date }): () => void;
}

export interface CursorCodec {
  /** Encodes an offset within `collection` (e.g. `work-items:<projectId>:<filter>`). */
  encode(collection: string, offset: number): string;
  /** Returns the offset, or throws a 422 ServiceError for a forged or foreign cursor. */
  decode(collection: string, cursor: string): number;
}

/** An error answered with the contract's error body `{error, code}`. */
export class ServiceError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export const invalid = (message: string) => new ServiceError(422, 'INVALID_REQUEST', message);
export const notFound = (what: string) => new ServiceError(404, 'NOT_FOUND', `${what} not found`);

export interface RawHandler {
  /** A path prefix such as `/git/`. */
  prefix: string;
  /** Match the path exactly, not as a prefix (the page at `/`). */
  exact?: boolean;
  handle(req: IncomingMessage, res: ServerResponse, deps: { db: DatabaseSync; config: ServiceConfig; now(): Date }): void | Promise<void>;
}
