// The well-known token shapes (docs/dispatch.md#the-wire), in one table: the client's error scrubbing
// (errors.ts) and the engine's log redaction (src/dispatch/redact.ts) both build their patterns
// from it, so a shape added here is redacted everywhere a token could surface. It lives in the API
// layer because that is the lowest layer both of them import.

/** One family of tokens: literal prefixes, then a body of at least `minBody` characters of `body`. */
export interface TokenShape {
  readonly name: string;
  readonly prefixes: readonly string[];
  /** A regular-expression character class the body is made of. */
  readonly body: string;
  /**
   * Shortest body that counts as a token: enough that a word such as `sk-1` or `ghp_short` is not
   * taken for a key, short enough that a token cut down in an error message is still caught.
   */
  readonly minBody: number;
}

export const TOKEN_SHAPES: readonly TokenShape[] = [
  { name: 'svc personal access token or run credential', prefixes: ['svc_pat_', 'svc_run_'], body: '[A-Za-z0-9_-]', minBody: 4 },
  // Personal, OAuth, user-to-server, server-to-server (installation) and refresh tokens.
  { name: 'GitHub token', prefixes: ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_'], body: '[A-Za-z0-9]', minBody: 6 },
  { name: 'GitHub fine-grained personal access token', prefixes: ['github_pat_'], body: '[A-Za-z0-9_]', minBody: 6 },
  { name: 'model provider API key (OpenAI, Anthropic, ...)', prefixes: ['sk-'], body: '[A-Za-z0-9_-]', minBody: 8 },
];

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The pattern of one shape; `\b` before the prefix keeps `task-list` or `desk-top` intact. */
export function tokenShapePattern(shape: TokenShape, flags = 'g'): RegExp {
  return new RegExp(`\\b(?:${shape.prefixes.map(escapeRegExp).join('|')})${shape.body}{${shape.minBody},}`, flags);
}

/** Every prefix of the table: text holding none of them holds no token shape. */
export const TOKEN_PREFIXES = new RegExp(
  TOKEN_SHAPES.flatMap((s) => s.prefixes)
    .map(escapeRegExp)
    .join('|'),
);

/** A bare `Bearer <value>`: the value goes, the scheme stays (a word such as "a Bearer of news" stays). */
export const BEARER_VALUE = /(\bbearer\s+)[A-Za-z0-9._~+/=-]{4,}/gi;
