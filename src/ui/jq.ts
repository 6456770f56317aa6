// `--jq EXPR`: the one JSON document filtered as gh's `--jq` does (strings print raw, each result
// on its own line), by jq itself compiled to WebAssembly (jq-wasm): the language users know, with
// no jq binary needed. Loaded only when `--jq` is given: it is 1.3 MB.

/** A jq expression that does not compile, or fails on the document: exit 2, one line. */
export class JqError extends Error {
  readonly exitCode = 2;
}

function jqMessage(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const line = text.split('\n').find((l) => l.includes('jq: error')) ?? text.split('\n')[0] ?? text;
  return line.replace(/^.*?jq: error(?: \(at [^)]*\))?: /, '').trim();
}

/** The document through the expression: jq's output, ending in a newline when there is any. */
export async function applyJq(value: unknown, expression: string): Promise<string> {
  // Emscripten's loader reads `__dirname`, which the bundled ES module svc runs as has not (the
  // WebAssembly is inlined in the loader, so the folder is never used): given for its one load.
  (globalThis as { __dirname?: string }).__dirname ??= import.meta.dirname;
  // A CommonJS module: bundled, its exports arrive as the default export.
  const mod = (await import('jq-wasm')) as typeof import('jq-wasm') & { default?: typeof import('jq-wasm') };
  const raw = mod.default?.raw ?? mod.raw;
  let out: string;
  try {
    out = await raw(JSON.stringify(value ?? null), expression, ['-r']);
  } catch (error) {
    throw new JqError(`--jq: ${jqMessage(error)}`);
  }
  return out === '' || out.endsWith('\n') ? out : `${out}\n`;
}

/** Refuses an expression that does not compile, before a command does work it would then not print. */
export async function checkJq(expression: string): Promise<void> {
  try {
    await applyJq(null, expression);
  } catch (error) {
    // Run-time errors on `null` (`.a[0] | error`) say nothing about the real document.
    if (error instanceof JqError && /compile error|syntax error/.test(error.message)) throw error;
  }
}
