// Reading a request's body, once, before any answer is written.
//
// Why every answer waits for the body (docs/service.md): an answer written while part of the request
// is still unread has to end with `connection: close`, and closing a socket that holds unread input
// makes the kernel reset the connection — the client then loses the answer it was reading (a GET
// with a 400 KB body to the backlog, answer ~480 KB, ended "aborted" 20 times out of 20). So the
// body is consumed on every path: kept (up to MAX_BODY_BYTES) for an operation that takes one,
// discarded otherwise. Memory stays bounded either way; only a body past MAX_DRAIN_BYTES is left
// unread, and that answer closes the connection.
import type { IncomingMessage } from 'node:http';

/** The most of a request body that is kept (and parsed). */
export const MAX_BODY_BYTES = 1024 * 1024;
/** The most of a request body that is read (and discarded past MAX_BODY_BYTES) before answering. */
export const MAX_DRAIN_BYTES = 16 * MAX_BODY_BYTES;

export interface ConsumedBody {
  /** The body, or its first `keep` bytes when `over`. */
  bytes: Buffer;
  /** Bytes received (at least `keep` + 1 when `over`). */
  size: number;
  /** More than `keep` bytes arrived (the kept bytes are not the whole body). */
  over: boolean;
  /** The whole body was read: the connection can stay open. False past MAX_DRAIN_BYTES. */
  complete: boolean;
  /** The client went away before the body ended: there is nobody to answer. */
  gone: boolean;
}

/**
 * Reads the request's body to its end, keeping at most `keep` bytes and discarding the rest. Stops
 * reading (complete: false) once more than `drainLimit` bytes arrived, or at once when the declared
 * length says it would be. Never rejects.
 */
export function consumeBody(req: IncomingMessage, keep: number, drainLimit = MAX_DRAIN_BYTES): Promise<ConsumedBody> {
  const declared = Number(req.headers['content-length']);
  if (req.readableEnded) return Promise.resolve({ bytes: Buffer.alloc(0), size: 0, over: false, complete: true, gone: false });
  if (Number.isFinite(declared) && declared > drainLimit) {
    return Promise.resolve({ bytes: Buffer.alloc(0), size: declared, over: declared > keep, complete: false, gone: false });
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let kept = 0;
    const finish = (outcome: Pick<ConsumedBody, 'complete' | 'gone'>) => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onGone);
      req.off('close', onGone);
      resolve({ bytes: Buffer.concat(chunks), size, over: size > keep, ...outcome });
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (kept < keep) {
        const part = kept + chunk.length <= keep ? chunk : chunk.subarray(0, keep - kept);
        chunks.push(part);
        kept += part.length;
      }
      if (size > drainLimit) {
        req.pause();
        finish({ complete: false, gone: false });
      }
    };
    const onEnd = () => finish({ complete: true, gone: false });
    // An aborted request errors (ECONNRESET) and closes without an `end`.
    const onGone = () => finish({ complete: false, gone: true });
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', onGone);
    req.once('close', onGone);
  });
}
