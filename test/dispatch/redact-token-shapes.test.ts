// One table of token shapes (src/api/token-shapes.ts) feeds both the client's error scrubbing
// (`redactTokens`, `redactDeep`) and the engine's log redaction (`createRedactor`, the stream
// redactor): every prefix of every shape is redacted by each path, and a body one character too
// short for the shape is left alone by each, so the two paths cannot drift apart again.
import { describe, expect, test } from 'vitest';
import { redactDeep, redactTokens } from '../../src/api/errors.js';
import { TOKEN_SHAPES } from '../../src/api/token-shapes.js';
import { createRedactor, createStreamRedactor, REDACTED } from '../../src/dispatch/redact.js';

const cases = TOKEN_SHAPES.flatMap((shape) =>
  shape.prefixes.map((prefix) => ({
    name: `${shape.name}: ${prefix}`,
    // A body of the shape's own characters: letters and digits are in every body class.
    token: `${prefix}${'aB3'.repeat(Math.ceil(shape.minBody / 3) + 4)}`,
    short: `${prefix}${'aB3'.repeat(4).slice(0, shape.minBody - 1)}`,
  })),
);

const paths: Array<[string, (text: string) => string]> = [
  ['redactTokens (error messages)', redactTokens],
  ['redactDeep (error bodies)', (text) => (redactDeep({ error: [text] }) as { error: string[] }).error[0]!],
  ['createRedactor (log lines)', createRedactor([])],
  [
    'createStreamRedactor (agent output)',
    (text) => {
      const r = createStreamRedactor([]);
      return r.push(text.slice(0, 7)) + r.push(text.slice(7)) + r.flush();
    },
  ],
];

describe.each(paths)('%s', (_path, redact) => {
  test.each(cases)('redacts $name', ({ token }) => {
    expect(redact(`before ${token} after`)).toBe(`before ${REDACTED} after`);
  });

  test.each(cases)('leaves a body too short for $name alone', ({ short }) => {
    expect(redact(`before ${short} after`)).toBe(`before ${short} after`);
  });
});

test('the table has the shapes that docs/agents.md (Redaction) names', () => {
  const prefixes = TOKEN_SHAPES.flatMap((s) => s.prefixes);
  for (const p of ['svc_pat_', 'svc_run_', 'ghs_', 'ghp_', 'github_pat_', 'sk-']) expect(prefixes).toContain(p);
});
