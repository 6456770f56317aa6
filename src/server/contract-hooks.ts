// The contract's document and validators (src/contract/openapi.ts, validate.ts) as the server
// uses them: request bodies are validated against the document, and (for tests and
// SVC_SERVER_VALIDATE_LOG) every response can be checked against it. Kept behind one object so the
// HTTP layer and the test support read the same hooks.
import type { OperationId } from '../contract/operations.js';
import { openapiDocument } from '../contract/openapi.js';
import { validateRequestBody, validateResponse, validateResponseHeaders, type SchemaIssue } from '../contract/validate.js';

export type { SchemaIssue };

export interface ContractHooks {
  openapiDocument: unknown;
  validateRequestBody: ((operationId: OperationId, body: unknown) => SchemaIssue[]) | null;
  validateResponse: ((operationId: OperationId, status: number, body: unknown) => SchemaIssue[]) | null;
  validateResponseHeaders: ((operationId: OperationId, status: number, headers: Record<string, string>) => SchemaIssue[]) | null;
}

const HOOKS: ContractHooks = {
  openapiDocument,
  validateRequestBody,
  validateResponse,
  validateResponseHeaders: (operationId, status, headers) => validateResponseHeaders(operationId, status, headers),
};

/** The hooks (async for callers written before the contract modules existed). */
export function loadContractHooks(): Promise<ContractHooks> {
  return Promise.resolve(HOOKS);
}
