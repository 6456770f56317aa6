// The contract's document and validators (src/contract/openapi.ts, validate.ts) as the server
// uses them: request bodies are validated against the document, and (for tests and
// SVC_SERVER_VALIDATE_LOG) every response can be checked against it. Kept behind one object so the
// HTTP layer and the test support read the same hooks.
import type { OperationId } from '../contract/operations.js';
import { openapiDocument } from '../contract/openapi.js';
import { validateRequestBody, validateResponse, validateResponseHeaders, type SchemaIssue } from '../contract/validate.js';

export type { SchemaIssue };

export interface ContractHooks {
  openapiDocument: typeof openapiDocument;
  validateRequestBody(operationId: OperationId, body: unknown): SchemaIssue[];
  validateResponse(operationId: OperationId, status: number, body: unknown): SchemaIssue[];
  validateResponseHeaders(operationId: OperationId, status: number, headers: Record<string, string>): SchemaIssue[];
}

export const CONTRACT_HOOKS: ContractHooks = { openapiDocument, validateRequestBody, validateResponse, validateResponseHeaders };
