// `svc logs` on a terminal: a log's text made visible as it streams (./visible.ts). Its own module,
// so every command's start-up does not load Node's stream modules for the one that pipes a file.
import { Transform } from 'node:stream';
import { visible } from './visible.js';

/** A stream that makes control characters visible in text passing through (UTF-8 safe across chunks). */
export function visibleStream(): Transform {
  const decoder = new TextDecoder('utf-8');
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      done(null, visible(decoder.decode(chunk, { stream: true })));
    },
    flush(done) {
      done(null, visible(decoder.decode()));
    },
  });
}
