// A chatty agent for the log-streaming benchmark: prints BYTES of log lines to stdout at RATE
// bytes/s (0: as fast as the pipe takes them), honouring back-pressure, then writes its own wall
// time in ms to TIMING_FILE. Run the same way into /dev/null, it is the baseline.
import { writeFileSync } from 'node:fs';

const [bytes, rate, timingFile] = [Number(process.argv[2]), Number(process.argv[3]), process.argv[4]];
const t0 = performance.now();
const line = 'agent: reading src/dispatch/event-stream.ts, running the tests, 3 passed, 0 failed ...\n';
const block = Buffer.from(line.repeat(Math.ceil(65536 / line.length)).slice(0, 65536));
const TICK_MS = 10;

let sent = 0;
const due = () => (rate > 0 ? Math.min(bytes, ((performance.now() - t0) / 1000) * rate) : bytes);
function pump() {
  // Write what is due by now; when the pipe is full, wait for it to drain (that is being blocked).
  while (sent < due()) {
    const n = Math.min(block.length, bytes - sent);
    sent += n;
    if (!process.stdout.write(n === block.length ? block : block.subarray(0, n))) return void process.stdout.once('drain', pump);
  }
  if (sent < bytes) return void setTimeout(pump, TICK_MS);
  process.stdout.end(() => writeFileSync(timingFile, String(performance.now() - t0)));
}
pump();
