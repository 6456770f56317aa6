// The commander tree. Each group registers itself; handlers are imported inside `.action()` so
// `svc --version` and `svc --help` load none of them.
import { Command } from 'commander';
import { registerApi } from './api/register.js';
import { registerAuth } from './auth/register.js';
import { registerBacklog } from './backlog/register.js';
import { registerConfig } from './config/register.js';
import type { OutStream } from '../ui/output.js';
import type { Context, Depth } from './context.js';
import { addFlags } from './flag-table.js';
import { GLOBAL_FLAGS } from './global-flags.js';
import { registerDemo } from './demo/register.js';
import { registerDesigns } from './designs/register.js';
import { registerDispatch } from './dispatch/register.js';
import { registerFolders } from './folders/register.js';
import { registerHelpTopics } from './help/register.js';
import { registerHosted } from './hosted/register.js';
import { registerItems } from './items/register.js';
import { registerLogs } from './logs/register.js';
import { registerPlan } from './plan/register.js';
import { registerProjects } from './projects/register.js';
import { registerReady } from './ready/register.js';
import { registerRuns } from './runs/register.js';
import { registerServer } from './server/register.js';
import { registerWhoami } from './whoami/register.js';
import { registerWorkspaces } from './workspaces/register.js';
import { registerWorkflow } from './workflow/register.js';
import { registerWorktrees } from './worktrees/register.js';

/** `name`: the command of the group the user's words invoke, where a group builds only that one whole. */
type Register = (program: Command, context: (cmd: Command) => Context, depth: Depth, name?: string) => void;

/**
 * The top-level help lists the commands in these groups, in this order, as `gh --help` does; each
 * register function adds its commands (and their subcommands) to the group named before it, and
 * is listed with the top-level names (and aliases) it adds: `svc config get` builds only the
 * config group (a test holds these names to what the functions add). The root help (`svc`,
 * `svc --help`) builds every group's top-level command and no subcommand: it lists only those.
 * Help for a command and completion walk the tree, so `svc help` and `svc completion` build all of
 * it, as does any other first word.
 */
const GROUPS: [heading: string, registers: [Register, names: string[]][]][] = [
  [
    'Dispatch commands:',
    [
      [registerDispatch, ['next', 'run', 'run_scope', 'run-scope', 'batch', 'auto', 'fix', 'continue', 'review']],
      [registerHosted, ['attach', 'git-credential']],
    ],
  ],
  [
    'Work item commands:',
    [
      [registerItems, ['items']],
      [registerReady, ['ready']],
      [registerBacklog, ['backlog']],
      [registerFolders, ['folders']],
      [registerDesigns, ['designs']],
      [registerPlan, ['plan']],
    ],
  ],
  [
    'Run commands:',
    [
      [registerRuns, ['runs']],
      [registerLogs, ['logs']],
      [registerWorktrees, ['worktrees']],
      [registerWorkflow, ['workflow']],
    ],
  ],
  [
    'Service commands:',
    [
      [registerWhoami, ['whoami']],
      [registerWorkspaces, ['workspaces']],
      [registerProjects, ['projects']],
      [registerApi, ['api']],
      [registerServer, ['server']],
    ],
  ],
  [
    'Setup commands:',
    [
      [registerAuth, ['auth']],
      [registerConfig, ['config']],
      [registerDemo, ['demo']],
      [registerHelpTopics, []],
    ],
  ],
];
const REGISTER_OF = new Map(GROUPS.flatMap(([, registers]) => registers.flatMap(([register, names]) => names.map((name) => [name, register] as const))));

/** The group names and register functions, for the test that holds them to the tree. */
export const groupsForTest = (): ReadonlyArray<readonly [Register, readonly string[]]> => GROUPS.flatMap(([, registers]) => registers);

/**
 * What `args` (the user's words) need built: the register function of the command they invoke,
 * when they start with global options that take no part in it and then a command this table
 * knows; 'top' when they hold no word and every option is a global one or help (the root help,
 * or a usage error about a global option: neither looks below the top-level commands); else
 * undefined (help, version, anything unknown: then the whole tree is built and commander answers
 * as ever).
 */
function invoked(program: Command, args: readonly string[]): { register: Register; name: string } | 'top' | undefined {
  const globals = new Map(program.options.filter((o) => o.long && o.long !== '--version').map((o) => [o.long!, o.required || o.optional]));
  let help = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    // After the root's help option commander reads every word as an unknown option (`svc -h config`
    // prints the root help), so a command there is not invoked.
    if (!arg.startsWith('-')) {
      const register = help ? undefined : REGISTER_OF.get(arg);
      return register && { register, name: arg };
    }
    if (arg === '-h' || arg === '--help') {
      help = true;
      continue;
    }
    const eq = arg.indexOf('=');
    const takesValue = globals.get(eq > 0 ? arg.slice(0, eq) : arg);
    if (takesValue === undefined) return undefined;
    if (takesValue && eq < 0) i++;
  }
  return 'top';
}

/** Where commander writes help and usage errors; by default the process's own streams. */
export interface ProgramStreams {
  stdout: OutStream;
  stderr: OutStream;
}

/**
 * commander's output through the given streams: its defaults read process.stdout and process.stderr
 * for a help's width and colours, which makes them (cli.ts writes without them while it can). svc's
 * help has no colours of its own, so whether commander strips colours from it changes nothing.
 */
function programOutput({ stdout, stderr }: ProgramStreams) {
  // Undefined for no terminal, as commander's own default answers (it then takes 80); its type
  // says number.
  const width = (stream: OutStream) => (stream.isTTY ? stream.columns : undefined) as number;
  const colours = (stream: OutStream) => Boolean(stream.isTTY && (stream as { hasColors?: () => boolean }).hasColors?.());
  return {
    writeOut: (text: string) => void stdout.write(text),
    writeErr: (text: string) => void stderr.write(text),
    getOutHelpWidth: () => width(stdout),
    getErrHelpWidth: () => width(stderr),
    getOutHasColors: () => colours(stdout),
    getErrHasColors: () => colours(stderr),
  };
}

/**
 * Builds the tree. `context` is called once a command runs, with the parsed global options. With
 * `args` (the words the program will parse), only the group of the invoked command is registered.
 */
export function buildProgram(version: string, context: (cmd: Command) => Context, streams?: ProgramStreams, args?: readonly string[]): Command {
  const program = addFlags(
    new Command('svc')
      .description('Dispatch coding agents over a work-tracking backlog, and run the service locally')
      .version(version, '-V, --version', 'print the version')
      .helpOption('-h, --help', 'show help'),
    GLOBAL_FLAGS,
  )
    .showSuggestionAfterError(true)
    .configureHelp({ sortSubcommands: false, showGlobalOptions: true })
    // Set before the subcommands exist so they inherit it: usage errors throw (cli.ts maps them
    // to exit 2) and print one line naming the way to help.
    .exitOverride()
    .configureOutput({
      ...(streams ? programOutput(streams) : {}),
      // commander puts its suggestion on a second line ("(Did you mean run?)"): it is kept, on the
      // same line, so the error stays one line.
      outputError: (text, write) =>
        write(
          `svc: ${text
            .replace(/^error: /, '')
            .trim()
            .split('\n')
            .map((l) => l.trim())
            .filter(Boolean)
            .join(' ')} (see --help)\n`,
        ),
    });

  const wanted = args ? invoked(program, args) : undefined;
  const only = typeof wanted === 'object' ? wanted : undefined;
  const depth: Depth = wanted === 'top' ? 'top' : 'whole';
  for (const [heading, registers] of GROUPS) {
    if (only && !registers.some(([register]) => register === only.register)) continue;
    program.commandsGroup(heading);
    for (const [register] of registers) if (!only || register === only.register) register(program, context, depth, only?.name);
  }
  return program;
}
