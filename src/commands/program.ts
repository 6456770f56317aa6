// The commander tree. Each group registers itself; handlers are imported inside `.action()` so
// `svc --version` and `svc --help` load none of them.
import { Command, Option } from 'commander';
import { registerApi } from './api/register.js';
import { registerAuth } from './auth/register.js';
import { registerBacklog } from './backlog/register.js';
import { registerConfig } from './config/register.js';
import type { OutStream } from '../ui/output.js';
import type { Context } from './context.js';
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

type Register = (program: Command, context: (cmd: Command) => Context) => void;

/**
 * The top-level help lists the commands in these groups, in this order, as `gh --help` does; each
 * register function adds its commands (and their subcommands) to the group named before it.
 */
const GROUPS: [heading: string, registers: Register[]][] = [
  ['Dispatch commands:', [registerDispatch, registerHosted]],
  ['Work item commands:', [registerItems, registerReady, registerBacklog, registerFolders, registerDesigns, registerPlan]],
  ['Run commands:', [registerRuns, registerLogs, registerWorktrees, registerWorkflow]],
  ['Service commands:', [registerWhoami, registerWorkspaces, registerProjects, registerApi, registerServer]],
  ['Setup commands:', [registerAuth, registerConfig, registerDemo, registerHelpTopics]],
];

/** Where commander writes help and usage errors; by default the process's own streams. */
export interface ProgramStreams {
  stdout: OutStream;
  stderr: OutStream;
}

/** Builds the tree. `context` is called once a command runs, with the parsed global options. */
export function buildProgram(version: string, context: (cmd: Command) => Context, streams?: ProgramStreams): Command {
  const program = new Command('svc')
    .description('Dispatch coding agents over a work-tracking backlog, and run the service locally')
    .version(version, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .addOption(new Option('--base-url <url>', 'service base address (SVC_BASE_URL)'))
    .addOption(new Option('--json', 'print exactly one JSON document on stdout'))
    .addOption(new Option('--jq <expression>', 'filter the JSON document with a jq expression, as gh does (implies --json)'))
    .addOption(new Option('--verbose', 'print request ids and timings on stderr'))
    .addOption(new Option('--no-color', 'no colour, no spinner'))
    .addOption(new Option('--insecure', 'allow sending a token over plain http to a non-loopback host'))
    .addOption(new Option('--max-wait <duration>', 'longest wait for a rate limit or an unavailable service (SVC_MAX_WAIT)'))
    .showSuggestionAfterError(true)
    .configureHelp({ sortSubcommands: false, showGlobalOptions: true })
    // Set before the subcommands exist so they inherit it: usage errors throw (cli.ts maps them
    // to exit 2) and print one line naming the way to help.
    .exitOverride()
    .configureOutput({
      ...(streams ? { writeOut: (text: string) => void streams.stdout.write(text), writeErr: (text: string) => void streams.stderr.write(text) } : {}),
      // commander puts its suggestion on a second line ("(Did you mean run?)"): it is kept, on the
      // same line, so the error stays one line.
      outputError: (text, write) => write(`svc: ${text.replace(/^error: /, '').trim().split('\n').map((l) => l.trim()).filter(Boolean).join(' ')} (see --help)\n`),
    });

  for (const [heading, registers] of GROUPS) {
    program.commandsGroup(heading);
    for (const register of registers) register(program, context);
  }
  return program;
}

/** Adds an example section to a command's help: every command shows at least one. */
export function withExamples(cmd: Command, ...examples: string[]): Command {
  return cmd.addHelpText('after', `\nExamples:\n${examples.map((e) => `  $ ${e}`).join('\n')}\n`);
}
