// The eight dispatch commands: each differs in its arguments, the card set the engine selects
// (docs/dispatch.md) and a few flags of its own (flags.ts: --rerun, auto's, the lanes' filters).
import type { Command } from 'commander';
import type { DispatchCommand } from '../../contract/types.js';
import type { Context, Depth } from '../context.js';
import { withExamples } from '../examples.js';
import { addFlags, flagsOf } from '../flag-table.js';
import { DISPATCH_FLAG, RERUN_FLAGS, PULL_REQUEST_FLAGS, AUTO_FLAGS, LANE_FLAGS, DISPATCH_FLAGS } from './flags.js';

interface Spec {
  name: DispatchCommand;
  args: string;
  summary: string;
  examples: string[];
  lanes?: boolean;
}

const SPECS: Spec[] = [
  {
    name: 'next',
    args: '',
    summary: 'run the next unit of ready work: the first runnable container, else the first ready bug group',
    examples: ['svc next --agent claude', 'svc next --dry-run'],
  },
  {
    name: 'run',
    args: '<keys...>',
    summary: 'run exactly the named work items, in that order',
    examples: ['svc run PROJ-12 --agent-cmd "./agent.sh {prompt_file}"', 'svc run PROJ-12 PROJ-14 --agent codex --parallel 2'],
  },
  {
    name: 'run_scope',
    args: '<key>',
    summary: 'run every live leaf beneath KEY in tree order, then the close-out prompt',
    examples: ['svc run_scope PROJ-3 --agent claude', 'svc run_scope PROJ-3 --dry-run'],
  },
  {
    name: 'batch',
    args: '',
    summary: 'run the ready leaves, up to --max (cards already implemented on svc/KEY, or with an open delivery, are skipped unless --rerun)',
    examples: ['svc batch --max 5 --priority high --agent claude', 'svc batch --ancestor PROJ-1 --dry-run'],
    lanes: true,
  },
  {
    name: 'auto',
    args: '',
    summary: 'open runs over the ready leaves until nothing is ready or --max is reached (skips work already done, unless --rerun)',
    examples: ['svc auto --max 20 --agent claude --on-failure continue'],
    lanes: true,
  },
  {
    name: 'fix',
    args: '<keys...>',
    summary:
      "fix the failing pull requests of the named items: on the pull request's head fetched from origin; --push pushes the fix there (fast-forward only)",
    examples: ['svc fix PROJ-12 --agent claude'],
  },
  {
    name: 'continue',
    args: '<run-id>',
    summary: 'run again the legs of a run that did not end implemented',
    examples: ['svc continue 01J9ZK3RUN --agent claude'],
  },
  {
    name: 'review',
    args: '<keys...>',
    summary:
      "review the open pull requests of the named items on their fetched head; the agent's final message is the result; a leg that changes files fails (kept on svc/review/KEY/RUN); never pushes",
    examples: ['svc review PROJ-12 --agent claude'],
  },
];

export function registerDispatch(program: Command, context: (cmd: Command) => Context, depth: Depth = 'whole', name?: string): void {
  for (const spec of SPECS) {
    const cmd = program.command(`${spec.name}${spec.args ? ` ${spec.args}` : ''}`).description(spec.summary);
    if (spec.name === 'run_scope') cmd.alias('run-scope');
    // The root help lists a command as `run [options] <keys...>`: of its ~40 flags it shows only
    // that there are some, so that tree gets one. Adding all eight commands' flags was half of
    // `svc --help`'s own work and took it into a second garbage collection. A command line that
    // names a dispatch command builds that one whole (a fleet's worker starts `svc auto` once per
    // machine, all at once); the other seven are there as the root help has them.
    const invoked = name === spec.name || (name === 'run-scope' && spec.name === 'run_scope');
    if (depth === 'top' || (name !== undefined && !invoked)) {
      addFlags(cmd, [DISPATCH_FLAG.agent]);
      continue;
    }
    addFlags(cmd, Object.values(DISPATCH_FLAG));
    if (spec.name === 'next' || spec.name === 'batch' || spec.name === 'auto') addFlags(cmd, RERUN_FLAGS);
    addFlags(cmd, PULL_REQUEST_FLAGS);
    if (spec.name === 'auto') addFlags(cmd, AUTO_FLAGS);
    if (spec.lanes) addFlags(cmd, LANE_FLAGS);
    withExamples(cmd, ...spec.examples);
    cmd.action(async (...argv: unknown[]) => {
      const command = argv[argv.length - 1] as Command;
      const positional = spec.args ? (argv[0] as string | string[]) : [];
      const { runDispatchCommand } = await import('./run-dispatch.js');
      await runDispatchCommand({ ...flagsOf(command, DISPATCH_FLAGS), command: spec.name, keys: ([] as string[]).concat(positional) }, context(command));
    });
  }
}
