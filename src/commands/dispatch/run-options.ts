// Which agent a dispatch runs and how its legs run: one rule for local and hosted runs, so they
// cannot drift apart.
import { dirname } from 'node:path';
import type { AgentChoice } from '../../dispatch/agent/presets.js';
import type { GitIdentity } from '../../dispatch/git/identity.js';
import type { ConfigEntry } from '../../dispatch/git/config-list.js';
import type { FlagOptions } from '../../dispatch/flags/table.js';
import { AGENT_FORMATS, AgentUserError, checkAgentChoice, fillOptions, isAgentName, loadEngine, MAX_ATTEMPTS, resolveAgentUser } from '../../dispatch/index.js';
import type { DispatchOptions } from '../../dispatch/lifecycle/types.js';
import type { Workflow } from '../../dispatch/workflow/policy.js';
import type { Context } from '../context.js';
import { UsageError } from '../exit-codes.js';
import type { StoredConfig } from '../config/store.js';
import { wholeNumber } from '../flag-values.js';
import type { DispatchFlags } from './flags.js';

/** The flags that choose the agent (a hosted run's `svc attach` has no --agent-format). */
export type AgentFlags = Pick<DispatchFlags, 'agent' | 'agentCmd' | 'agentFormat' | 'model'>;

/**
 * `opened` is a hosted run's own choice: its agent counts when it names a preset (`custom` means
 * it was opened with --agent-cmd, which the run does not carry).
 */
export function agentChoice(flags: AgentFlags, ctx: Context, required: boolean, opened?: { agent: string | null; model: string | null }): AgentChoice {
  const fromRun = opened?.agent && isAgentName(opened.agent) ? opened.agent : undefined;
  const agent = flags.agent?.[0] ?? (flags.agentCmd ? undefined : (fromRun ?? ctx.config().get('agent')));
  const model = flags.model?.[0] ?? opened?.model ?? ctx.config().get('model');
  if (flags.agentFormat !== undefined && !flags.agentCmd) throw new UsageError('--agent-format describes an --agent-cmd; a preset (--agent) has its own');
  const stream = flags.agentFormat !== undefined ? AGENT_FORMATS[flags.agentFormat] : undefined;
  if (flags.agentFormat !== undefined && !stream)
    throw new UsageError(`unknown --agent-format '${flags.agentFormat}'; one of ${Object.keys(AGENT_FORMATS).join(', ')}`);
  const choice = {
    ...(agent ? { agent } : {}),
    ...(flags.agentCmd ? { agentCmd: flags.agentCmd } : {}),
    ...(model ? { model } : {}),
    ...(stream ? { stream } : {}),
  };
  checkAgentChoice(choice, required, opened?.agent);
  return choice;
}

/**
 * Best-of-N (`--attempts`, the workflow's `attempts:`): how many, and the agent of each attempt
 * (`--agent` repeated). Refused in one line where it cannot work: no check to decide, more than one
 * `--agent` without attempts, or a run in place.
 */
export function attemptOptions(
  flags: Pick<DispatchFlags, 'agent' | 'model' | 'attempts' | 'worktree'>,
  first: AgentChoice,
  workflow: Workflow | null,
): Pick<DispatchOptions, 'attempts' | 'agents'> {
  const asked = wholeNumber(flags.attempts, '--attempts');
  if (asked !== undefined && (asked < 1 || asked > MAX_ATTEMPTS)) throw new UsageError(`--attempts takes 1 to ${MAX_ATTEMPTS}, not ${asked}`);
  const count = asked ?? workflow?.attempts ?? 1;
  const names = flags.agent ?? [];
  const models = flags.model ?? [];
  if (names.length > 1 && count < 2) throw new UsageError('--agent more than once gives attempts their agents: add --attempts N (N > 1)');
  if (models.length > 1 && count < 2) throw new UsageError('--model more than once gives attempts their models: add --attempts N (N > 1)');
  if (models.length > 1 && first.agentCmd !== undefined)
    throw new UsageError('--model more than once picks the models of a preset (--agent); an --agent-cmd names its own');
  if (count > 1 && !workflow?.verify)
    throw new UsageError(
      `${asked !== undefined ? '--attempts' : "the workflow's attempts:"} needs a check to pick the winner: set verify in .svc/workflow.yml or pass --verify CMD`,
    );
  if (count > 1 && flags.worktree === false) throw new UsageError('--attempts runs each attempt in a worktree of its own: drop --no-worktree');
  return {
    ...(asked !== undefined ? { attempts: asked } : {}),
    // Attempt n: the n-th --agent and the n-th --model, each list cycling on its own.
    ...(names.length > 1 || models.length > 1
      ? {
          agents: Array.from({ length: count }, (_, i) => ({
            ...first,
            ...(names.length > 1 ? { agent: names[i % names.length]! } : {}),
            ...(models.length > 1 ? { model: models[i % models.length]! } : {}),
          })),
        }
      : {}),
  };
}

/**
 * The options the flags' rows fill (src/dispatch/flags/table.ts), from the flags of a command that
 * takes the rows of `table`: each from its flag, else its variable, else the stored config, else
 * its default; a bad value is one line, exit 2.
 */
export function flagOptions(table: readonly { flags: string }[], flags: Partial<DispatchFlags>, ctx: Context): FlagOptions {
  return fillOptions(table, flags, { env: ctx.env, config: (key) => ctx.config().get(key as keyof StoredConfig) });
}

/**
 * The user agents run as (README.md#configuration, docs/trust.md): `--agent-user` > SVC_AGENT_USER > stored
 * `agentUser` > the pool `svc-agent-N` when svc is root. With a user, svc's state and config folders
 * are made private (0700) first, so nothing of svc's is open to the agent. No user: svc's own, with
 * a warning (shown when the first agent starts) where svc is root or the run is hosted.
 */
export async function agentUserFor(
  flags: Pick<DispatchFlags, 'agentUser'>,
  ctx: Context,
  where: { stateDir: string; hosted: boolean; uid?: number },
): Promise<Pick<DispatchOptions, 'agentUser' | 'agentUserWarning'>> {
  const stored = ctx.config().get('agentUser');
  const [asked, source] =
    flags.agentUser !== undefined
      ? [flags.agentUser, '--agent-user']
      : ctx.env.SVC_AGENT_USER
        ? [ctx.env.SVC_AGENT_USER, 'SVC_AGENT_USER']
        : [stored, 'agentUser'];
  const uid = where.uid ?? (typeof process.getuid === 'function' ? process.getuid() : -1);
  let choice: Awaited<ReturnType<typeof resolveAgentUser>>;
  try {
    choice = await resolveAgentUser({ asked, source, uid, runner: where.hosted });
  } catch (error) {
    if (error instanceof AgentUserError) throw new UsageError(error.message);
    throw error;
  }
  let warning = choice.warning;
  if (!choice.pool && where.hosted && uid !== 0 && asked !== 'none') {
    warning = "hosted run without root: agents run as svc's own user and could read its environment (start svc as root to run them as svc-agent-N)";
  }
  if (choice.pool) {
    const { ensurePrivateDir } = await loadEngine();
    await ensurePrivateDir(where.stateDir);
    await ensurePrivateDir(dirname(ctx.config().path));
  }
  return { agentUser: choice.pool, agentUserWarning: warning };
}

/**
 * The repository's workflow for a run: `.svc/workflow.yml` of the base commit with `--verify`,
 * `--no-verify` and `--setup` over it. A mistake in the file is one line and exit 2, before any
 * run opens; a working-tree file that differs from the committed one is said in `hint`.
 */
export async function workflowFor(
  flags: Pick<DispatchFlags, 'verify' | 'setup'>,
  repo: string,
  baseRef = 'HEAD',
  /** How messages name the base (its branch), where `baseRef` is a commit id. */
  label = baseRef,
): Promise<{ workflow: Workflow | null; hint: string | null }> {
  if (flags.verify !== undefined && flags.verify !== false && !flags.verify.trim()) throw new UsageError('--verify needs a command (or --no-verify for none)');
  if (flags.setup !== undefined && !flags.setup.trim()) throw new UsageError('--setup needs a command');
  const { applyWorkflowFlags, loadWorkflow, WorkflowFileError } = await loadEngine();
  try {
    const loaded = await loadWorkflow(repo, baseRef, label);
    return { workflow: applyWorkflowFlags(loaded.workflow, flags), hint: loaded.hint };
  } catch (error) {
    if (error instanceof WorkflowFileError) throw new UsageError(error.message);
    throw error;
  }
}

/**
 * Who the agents' commits are by (git/identity.ts): `--git-identity "Name <email>"`, checked; else
 * null where git finds one for `repo` in the agents' environment; else svc's bot.
 */
export async function gitIdentityFor(
  flags: Pick<DispatchFlags, 'gitIdentity'>,
  repo: string,
  env: NodeJS.ProcessEnv,
  listing?: Promise<ConfigEntry[] | null>,
): Promise<GitIdentity | null> {
  const { agentIdentity, parseIdentity } = await loadEngine();
  let asked: GitIdentity | undefined;
  if (flags.gitIdentity !== undefined) {
    const id = parseIdentity(flags.gitIdentity);
    if (!id) throw new UsageError(`--git-identity takes "Name <email>", as git writes an author; not ${JSON.stringify(flags.gitIdentity)}`);
    asked = id;
  }
  return agentIdentity(repo, asked, env, listing);
}
