// Stream parsers over realistic transcripts, fed in awkward chunks.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createStreamParser } from '../../../src/dispatch/agent/streams/index.js';
import type { StreamFormat } from '../../../src/dispatch/agent/types.js';

const STREAMS = resolve(import.meta.dirname, '../../fixtures/agents/streams');

/** Feeds the transcript in chunks of `size` bytes, so lines and UTF-8 characters straddle chunks. */
function parse(format: StreamFormat, file: string, size = 7) {
  const bytes = readFileSync(join(STREAMS, file));
  const parser = createStreamParser(format);
  for (let i = 0; i < bytes.length; i += size) parser.push(bytes.subarray(i, i + size));
  parser.end();
  return { verdict: parser.verdict(), usage: parser.usage() };
}

describe('stream parsers', () => {
  it.each([
    ['claude-stream-json', 'claude-success.jsonl', { tokensIn: 37_120, tokensOut: 1_432, costUsd: 0.1834 }],
    ['codex-json', 'codex-success.jsonl', { tokensIn: 24_763, tokensOut: 122 }],
    ['gemini-stream-json', 'gemini-success.jsonl', { tokensIn: 14_000, tokensOut: 1_300 }],
    ['opencode-json', 'opencode-success.jsonl', { tokensIn: 12_500, tokensOut: 350, costUsd: 0.02 }],
  ] as const)('%s: %s succeeds with its spend', (format, file, usage) => {
    const { verdict, usage: seen } = parse(format, file);
    expect(verdict).toEqual({ outcome: 'succeeded', reason: null });
    expect(seen.tokensIn).toBe(usage.tokensIn);
    expect(seen.tokensOut).toBe(usage.tokensOut);
    if ('costUsd' in usage) expect(seen.costUsd).toBeCloseTo(usage.costUsd, 6);
    else expect(seen.costUsd).toBeUndefined();
  });

  it.each([
    ['claude-stream-json', 'claude-error.jsonl', 'agent reported error: error_max_turns'],
    ['codex-json', 'codex-failed.jsonl', 'agent reported error: unexpected status 401 Unauthorized: Incorrect API key provided'],
    ['gemini-stream-json', 'gemini-error.jsonl', 'agent reported error: Reached max session turns for this session'],
    ['opencode-json', 'opencode-error.jsonl', 'agent reported error: No API key found for provider anthropic'],
  ] as const)('%s: %s fails with the reported error', (format, file, reason) => {
    const { verdict } = parse(format, file, 3);
    expect(verdict).toEqual({ outcome: 'failed', reason });
  });

  it('ignores garbled and unknown lines and never throws', () => {
    const parser = createStreamParser('claude-stream-json');
    const junk = [
      'not json at all',
      '{"type":',
      '[1,2,3]',
      'null',
      '{"type":"result","usage":"not an object","subtype":42}',
      '{"type":"something_new","payload":{}}',
      '\u0000\u0001binary',
    ].join('\n');
    expect(() => {
      parser.push(junk);
      parser.push('\n');
      parser.end();
    }).not.toThrow();
    // The odd result line still counts as a terminal event; its broken usage is simply absent.
    expect(parser.usage()).toEqual({});
  });

  it('reports no verdict when no terminal event came', () => {
    const parser = createStreamParser('codex-json');
    parser.push('{"type":"thread.started","thread_id":"t"}\n{"type":"turn.started"}\n');
    parser.end();
    expect(parser.verdict()).toBeNull();
  });

  it('parses a last line that has no newline at the end', () => {
    const parser = createStreamParser('gemini-stream-json');
    parser.push('{"type":"result","status":"success","stats":{"input_tokens":5,"output_tokens":6}}');
    expect(parser.verdict()).toBeNull();
    parser.end();
    expect(parser.verdict()).toEqual({ outcome: 'succeeded', reason: null });
    expect(parser.usage()).toEqual({ tokensIn: 5, tokensOut: 6 });
  });

  it('drops an over-long line but keeps parsing the next ones', () => {
    const parser = createStreamParser('codex-json');
    const huge = 'x'.repeat(1024 * 1024);
    for (let i = 0; i < 10; i++) parser.push(huge);
    parser.push('\n{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":2}}\n');
    parser.end();
    expect(parser.verdict()).toEqual({ outcome: 'succeeded', reason: null });
  });

  // Transcripts the real CLIs printed against test/agents' mock model (versions in docs/agents.md).
  it('codex: a Reconnecting error the turn recovers from does not fail it (0.169.0)', () => {
    expect(parse('codex-json', 'codex-reconnect.jsonl')).toEqual({
      verdict: { outcome: 'succeeded', reason: null },
      usage: { tokensIn: 240, tokensOut: 60 },
    });
  });

  it('codex: an error event with no turn event after it fails the leg', () => {
    const parser = createStreamParser('codex-json');
    parser.push('{"type":"turn.started"}\n{"type":"error","message":"stream broke"}\n');
    parser.end();
    expect(parser.verdict()).toEqual({ outcome: 'failed', reason: 'agent reported error: stream broke' });
  });

  it.each([
    ['codex-json', 'codex-http400.jsonl', 'agent reported error: mock refuses: unsupported value for parameter temperature'],
    ['claude-stream-json', 'claude-api-error.jsonl', 'agent reported error: API Error: 400 mock refuses: unsupported value for parameter temperature'],
    ['gemini-stream-json', 'gemini-stream-ended.jsonl', 'agent reported error: Model stream ended without a finish reason.'],
  ] as const)('%s: the reason is the real message (%s)', (format, file, reason) => {
    expect(parse(format, file).verdict).toEqual({ outcome: 'failed', reason });
  });

  it('opencode 1.18 prints no done event: the last step that ends without tool calls decides', () => {
    expect(parse('opencode-json', 'opencode-1.18.jsonl')).toEqual({
      verdict: { outcome: 'succeeded', reason: null },
      usage: { tokensIn: 240, tokensOut: 60, costUsd: 0.0018 },
    });
    const parser = createStreamParser('opencode-json');
    parser.push('{"type":"step_finish","part":{"reason":"tool-calls","tokens":{"input":1,"output":1}}}\n');
    parser.end();
    expect(parser.verdict(), 'a turn cut after a tool step has not ended').toBeNull();
  });
});

describe("the final message each format carries (a review's text, a pull request's body)", () => {
  const said = (format: StreamFormat, events: unknown[]): string | null => {
    const parser = createStreamParser(format);
    parser.push(`noise before the stream\n${events.map((e) => JSON.stringify(e)).join('\n')}`);
    parser.end();
    return parser.finalMessage();
  };

  it.each([
    ['claude-stream-json', [{ type: 'result', subtype: 'success', result: '  Looks good.  ' }], 'Looks good.'],
    [
      'codex-json',
      [
        { type: 'item.completed', item: { type: 'agent_message', text: 'first' } },
        { type: 'item.completed', item: { type: 'command_execution', text: 'ls' } },
        { type: 'item.completed', item: { type: 'agent_message', text: 'last word' } },
        { type: 'turn.completed', usage: {} },
      ],
      'last word',
    ],
    [
      'gemini-stream-json',
      [
        { type: 'message', role: 'assistant', content: 'before the tool' },
        { type: 'tool_use', tool_name: 'shell' },
        { type: 'message', role: 'assistant', content: 'Two ' },
        { type: 'message', role: 'assistant', content: 'deltas.' },
        { type: 'result', status: 'success' },
      ],
      'Two deltas.',
    ],
    [
      'opencode-json',
      [
        { type: 'text', part: { text: 'thinking aloud' } },
        { type: 'text', part: { text: 'Done: one file.' } },
        { type: 'step_finish', part: { reason: 'stop' } },
      ],
      'Done: one file.',
    ],
  ] as const)('%s', (format, events, expected) => {
    expect(said(format, [...events])).toBe(expected);
  });

  it('is null when the stream said nothing (a blank result counts as nothing)', () => {
    expect(said('claude-stream-json', [{ type: 'result', subtype: 'success', result: '   ' }])).toBeNull();
    expect(said('codex-json', [{ type: 'turn.completed', usage: {} }])).toBeNull();
  });
});
