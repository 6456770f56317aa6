// createOutput as svc's start-up makes it (cli.ts: loadLazy, then context), for tests that build
// an output synchronously: the styles for the options' colour level, chalk imported here.
import { Chalk } from 'chalk';
import { colorLevel, createOutput, type Output, type OutputOptions } from '../../src/ui/output.js';
import { PLAIN } from '../../src/ui/style.js';

export function testOutput(opts: OutputOptions): Output {
  const level = colorLevel(opts, opts.stderr);
  return createOutput({ ...opts, style: level === 0 ? PLAIN : new Chalk({ level }) });
}
