// An agent's stream as readable lines (src/dispatch/agent/streams/render.ts), over logs the real
// CLIs wrote: test/fixtures/agents/recorded/<agent>-<case>.log is a leg's log as svc kept it when
// `npm run test:agents` drove the real claude, codex, gemini and opencode (the pins of
// scripts/install-agents.mjs) against its mock model, as root through the agent pool; the .txt
// beside each is what a reader is shown.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createStreamRenderer } from '../../../src/dispatch/agent/streams/index.js';
import type { StreamFormat } from '../../../src/dispatch/agent/types.js';

const RECORDED = resolve(import.meta.dirname, '../../fixtures/agents/recorded');
const FORMATS = { claude: 'claude-stream-json', codex: 'codex-json', gemini: 'gemini-stream-json', opencode: 'opencode-json' } as const;

/** Renders `bytes` fed in chunks of `size`, so lines and UTF-8 characters straddle chunks. */
function render(format: StreamFormat | null, bytes: Buffer, size = bytes.length || 1): string {
  const r = createStreamRenderer(format);
  let out = '';
  for (let i = 0; i < bytes.length; i += size) out += r.push(bytes.subarray(i, i + size));
  return out + r.end();
}

const recorded = (name: string) => readFileSync(join(RECORDED, `${name}.log`));
const readable = (name: string) => readFileSync(join(RECORDED, `${name}.txt`), 'utf8');
/** The readable text of a recorded log, rendered now. */
const shownOf = (name: string) => render(FORMATS[name.split('-')[0] as keyof typeof FORMATS], recorded(name));
const event = (value: unknown) => `${JSON.stringify(value)}\n`;

describe('a recorded stream of each preset, as readable lines', () => {
  const cases = Object.entries(FORMATS).flatMap(([agent, format]) => ['success', 'http400'].map((c) => [`${agent}-${c}`, format] as const));

  it.each(cases)('%s: the same lines whole or in chunks of 7 bytes', (name, format) => {
    expect(render(format, recorded(name))).toBe(readable(name));
    expect(render(format, recorded(name), 7)).toBe(readable(name));
  });

  it.each(Object.keys(FORMATS))('%s: no JSON event is left in the readable text, and every non-JSON line of the log is in it unchanged', (agent) => {
    const log = recorded(`${agent}-success`).toString('utf8');
    const shown = shownOf(`${agent}-success`);
    expect(shown).not.toMatch(/^\{"/m);
    const plain = log.split('\n').filter((l) => l && !l.startsWith('{'));
    for (const line of plain) expect(shown.split('\n')).toContain(line);
  });

  it('says what the agent did: the command it ran, what it answered, the end with its spend', () => {
    expect(shownOf('claude-success')).toContain(
      '$ id -u > ran-as.txt && echo done > DEMO-3.txt && git add -A && git commit -qm "DEMO-3: done by the mock model"\n  (Bash completed with no output)\nCommitted the change.\ndone: 2 turns, 0.8 s, $0.0022, 240 tokens in, 60 out\n',
    );
    expect(shownOf('codex-success')).toMatch(/^\$ \/usr\/bin\/bash -lc 'id -u > ran-as\.txt .*'\nCommitted the change\.\ndone: 240 tokens in, 60 out\n$/m);
    expect(shownOf('gemini-success')).toContain('started: auto\nWorking on it. \n$ id -u > ran-as.txt');
    expect(shownOf('opencode-success')).toContain('  (no output)\nCommitted the change.\ndone: $0.0016, 240 tokens in, 60 out\n');
    expect(shownOf('claude-http400')).toMatch(/\nfailed: API Error: 400 mock refuses: unsupported value for parameter temperature \(1 turn/);
    expect(shownOf('codex-http400')).toMatch(/\nfailed: mock refuses: unsupported value for parameter temperature\n$/);
    expect(shownOf('gemini-http400')).toMatch(/\nfailed: \[API Error: mock refuses: unsupported value for parameter temperature\] \(/);
    expect(shownOf('opencode-http400')).toMatch(/\nerror: APIError: mock refuses: unsupported value for parameter temperature\n$/);
  });
});

describe('what is not an event of the format', () => {
  it('lines that are not JSON, JSON that is no event the format knows, and a CR pass through unchanged', () => {
    const text = `plain line\r\n{"type":"something_new","x":1}\n[1, 2]\n{not json\n\n${event({ type: 'result', subtype: 'success', is_error: false, num_turns: 1 })}`;
    expect(render('claude-stream-json', Buffer.from(text), 3)).toBe('plain line\r\n{"type":"something_new","x":1}\n[1, 2]\n{not json\n\ndone: 1 turn\n');
  });

  it('without a format (aider, a plain --agent-cmd) every byte comes as recorded', () => {
    const bytes = recorded('claude-success');
    expect(render(null, bytes, 5)).toBe(bytes.toString('utf8'));
  });

  it("a last line cut mid-write (a live run's) is held while more may come, then shown as it is", () => {
    const whole = event({ type: 'item.completed', item: { type: 'agent_message', text: 'half way' } });
    const r = createStreamRenderer('codex-json');
    expect(r.push(`${event({ type: 'turn.started' })}${whole.slice(0, 20)}`)).toBe('');
    expect(r.end()).toBe(whole.slice(0, 20));
    // The same line, finished later (`--follow`), is rendered once whole.
    const f = createStreamRenderer('codex-json');
    expect(f.push(whole.slice(0, 20)) + f.push(whole.slice(20)) + f.end()).toBe('half way\n');
  });

  it("an event whose fields have unexpected types is no crash: what it holds is shown, another format's event passes through", () => {
    const odd = event({ type: 'assistant', message: { content: 'not a list' } }) + event({ type: 'tool_use', part: 7 });
    expect(render('claude-stream-json', Buffer.from(odd))).toBe('{"type":"tool_use","part":7}\n');
    expect(render('opencode-json', Buffer.from(event({ type: 'tool_use', part: { state: 'x' } })))).toBe('→ tool\n');
  });
});

describe('the shape of the lines', () => {
  it("Gemini's answer in pieces is one text, shown before the next event or at the end", () => {
    const pieces = ['Look', 'ing at ', 'it.'].map((content) => event({ type: 'message', role: 'assistant', content, delta: true })).join('');
    const tool = event({ type: 'tool_use', tool_name: 'read_file', parameters: { file_path: 'src/a.ts' } });
    expect(render('gemini-stream-json', Buffer.from(pieces + tool + pieces), 4)).toBe('Looking at it.\n→ read_file src/a.ts\nLooking at it.\n');
    expect(render('gemini-stream-json', Buffer.from(`${pieces}noise\n`))).toBe('Looking at it.\nnoise\n');
  });

  it("a tool's output is indented under its call and cut after 10 lines", () => {
    const output = Array.from({ length: 25 }, (_, i) => `line ${i + 1}`).join('\n');
    const shown = render(
      'opencode-json',
      Buffer.from(event({ type: 'tool_use', part: { tool: 'bash', state: { status: 'completed', input: { command: 'seq 25' }, output } } })),
    );
    expect(shown.split('\n')).toEqual(['$ seq 25', ...Array.from({ length: 10 }, (_, i) => `  line ${i + 1}`), '  … 15 more lines (svc logs --raw)', '']);
  });

  it('a failed command says its exit; a tool error and an error event say so', () => {
    const codex =
      event({ type: 'item.started', item: { type: 'command_execution', command: 'make' } }) +
      event({ type: 'item.completed', item: { type: 'command_execution', command: 'make', aggregated_output: 'boom\n', exit_code: 2 } });
    expect(render('codex-json', Buffer.from(codex))).toBe('$ make\n  boom\n  exit 2\n');
    const claude = event({ type: 'user', message: { content: [{ type: 'tool_result', content: [{ type: 'text', text: 'no such file' }], is_error: true }] } });
    expect(render('claude-stream-json', Buffer.from(claude))).toBe('  error: no such file\n');
    expect(render('gemini-stream-json', Buffer.from(event({ type: 'error', severity: 'warning', message: 'Loop detection disabled' })))).toBe(
      'warning: Loop detection disabled\n',
    );
  });

  it("the fixtures' hand-written transcripts render too (tool names, file changes, reasoning)", () => {
    const streams = resolve(import.meta.dirname, '../../fixtures/agents/streams');
    const codex = render('codex-json', readFileSync(join(streams, 'codex-success.jsonl')));
    expect(codex).toBe(
      `(thinking) **Looking at the handler**\n$ bash -lc 'git commit -am "SVC-3: fix parser"'\n  [svc/SVC-3 9f8e7d6] SVC-3: fix parser\nFixed the parser and committed.\ndone: 24763 tokens in, 122 out\n`,
    );
    const claude = render('claude-stream-json', readFileSync(join(streams, 'claude-error.jsonl')));
    expect(claude).toBe(
      'started: claude-sonnet-4-5 in /tmp/wt/SVC-2\nWorking on it.\nthis line is not JSON: warning from a wrapper\nfailed: error_max_turns (30 turns, 91.0 s, $0.42, 20000 tokens in, 3000 out)\n',
    );
  });
});
