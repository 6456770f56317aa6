// The floor of the log pipeline: what a person would write in plain Node to keep an agent's output
// in a file without letting a token through, and nothing else. It spawns the agent, reads its
// stdout as Node delivers it, looks at each piece for the token prefixes and the words
// `authorization`/`bearer` (the two scans svc's redactor makes on text that holds no secret), and
// appends the piece to a log. No svc code. Usage: node bare-reader.mjs LOG_FILE AGENT ARGS...
import { spawn } from 'node:child_process';
import { closeSync, openSync, writeSync } from 'node:fs';

const [logFile, agent, ...args] = process.argv.slice(2);
const PREFIXES = /svc_pat_|svc_run_|ghp_|gho_|ghu_|ghs_|ghr_|github_pat_|sk-/;
const WORDS = /[Aa][Uu][Tt][Hh][Oo][Rr][Ii][Zz][Aa][Tt][Ii][Oo][Nn]|[Bb][Ee][Aa][Rr][Ee][Rr]/;
const log = openSync(logFile, 'a', 0o600);
let suspicious = 0;
const child = spawn(agent, args, { stdio: ['ignore', 'pipe', 'inherit'] });
child.stdout.on('data', (chunk) => {
  const view = chunk.latin1Slice(0, chunk.length);
  if (PREFIXES.test(view) || WORDS.test(view)) suspicious++;
  writeSync(log, chunk);
});
child.on('close', (code) => {
  closeSync(log);
  // The count is printed so the scans cannot be optimised away.
  process.stdout.write(`${suspicious}\n`);
  process.exitCode = code ?? 1;
});
