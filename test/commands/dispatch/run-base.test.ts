// The base a run opens with (docs/workflow.md, "The base commit"): an agent that rewrites
// .svc/workflow.yml on its branch, through a run in place, changes nothing for the next run. The
// checkout goes back to the user's branch when the run ends; a checkout left on a `svc/` branch
// (a crash, or by hand) is refused before any run opens; `copy:` takes the trusted workflow's files
// only. Run as root through the default pool as well as with svc's own user.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isolatedEnv, makeRepo, run, type CliEnv } from '../../support/cli.js';
import { localServerForFile } from '../../support/server-process.js';
import { svcInProcess } from '../../support/svc-in-process.js';

const server = localServerForFile();

const isRoot = process.getuid?.() === 0;
const USERS: [string, string | undefined][] = [['svc’s own user', 'none'], ...(isRoot ? [['the default pool', undefined] as [string, undefined]] : [])];
const ID = '-c user.name=a -c user.email=a@example.invalid';

/** A script every user may read (the pool's agents run it). */
function script(body: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-base-agent-'));
  chmodSync(dir, 0o755);
  writeFileSync(join(dir, 'agent.sh'), `set -e\n${body}\n`, { mode: 0o755 });
  return `sh ${join(dir, 'agent.sh')}`;
}

/** A checkout whose workflow copies `.env`, with root-only secrets beside it that no rule names. */
async function checkout(): Promise<string> {
  const repo = await makeRepo();
  mkdirSync(join(repo, '.svc'));
  writeFileSync(join(repo, '.svc/workflow.yml'), 'copy: [".env"]\n');
  writeFileSync(join(repo, '.gitignore'), '.env\nsecrets/\n*.pem\n');
  await run('git', ['add', '.'], repo);
  await run('git', [...ID.split(' '), 'commit', '-qm', 'workflow'], repo);
  writeFileSync(join(repo, '.env'), 'PUBLIC=1\n');
  mkdirSync(join(repo, 'secrets'), { mode: 0o700 });
  writeFileSync(join(repo, 'secrets/prod.env'), 'AWS_SECRET_ACCESS_KEY=prod-secret-value\n', { mode: 0o600 });
  writeFileSync(join(repo, 'deploy.pem'), '-----BEGIN PRIVATE KEY-----\npem-secret-value\n', { mode: 0o600 });
  return repo;
}

describe.each(USERS)('a run in place, agents as %s', (_name, agentUser) => {
  const env = (): CliEnv => isolatedEnv({ SVC_BASE_URL: server.url, SVC_TOKEN: server.token, SVC_AGENT_USER: agentUser });

  it('cannot rewrite the next run’s rules: the checkout is back on main, and the next run reads main’s workflow', async () => {
    const repo = await checkout();
    const marks = mkdtempSync(join(tmpdir(), 'svc-base-marks-'));
    chmodSync(marks, 0o777);
    // The attacker: a workflow that copies everything and runs its own setup, committed on its branch.
    const rewrite = script(
      [
        `printf 'copy: ["**"]\\nsetup:\\n  - touch ${marks}/attacker-setup-ran\\n' > .svc/workflow.yml`,
        'git add .svc/workflow.yml',
        `git ${ID} commit -qm "$SVC_CARD_KEY: new rules"`,
      ].join('\n'),
    );
    const first = await svcInProcess(['run', 'DEMO-6', '--no-worktree', '--agent-cmd', rewrite, '--repo', repo], { env: env() });
    // The workflow file is a protected path: the leg fails, its work stays on its branch.
    expect(first.code, first.stderr).toBe(1);
    expect(first.stderr).toContain('changed a protected path: .svc/workflow.yml');
    expect(await run('git', ['rev-parse', '--abbrev-ref', 'HEAD'], repo)).toBe('main\n');
    expect(await run('git', ['show', 'svc/DEMO-6:.svc/workflow.yml'], repo)).toContain('**');

    // The victim leg prints whatever it was given.
    const reader = script(
      `ls -a > ${marks}/seen.txt\ncat .env secrets/prod.env deploy.pem >> ${marks}/seen.txt 2>/dev/null || true\ngit ${ID} commit -q --allow-empty -m "$SVC_CARD_KEY: read"`,
    );
    const second = await svcInProcess(['run', 'DEMO-7', '--agent-cmd', reader, '--repo', repo], { env: env() });
    expect(second.code, second.stderr).toBe(0);
    expect(existsSync(join(marks, 'attacker-setup-ran'))).toBe(false);
    const seen = readFileSync(join(marks, 'seen.txt'), 'utf8');
    expect(seen).toContain('PUBLIC=1');
    expect(seen).not.toContain('prod-secret-value');
    expect(seen).not.toContain('pem-secret-value');
  });

  it('a checkout left on a svc/ branch is refused in one line (exit 2), and no run opens', async () => {
    const repo = await checkout();
    await run('git', ['checkout', '-qb', 'svc/DEMO-6'], repo);
    const e = env();
    const r = await svcInProcess(['run', 'DEMO-7', '--agent-cmd', 'true', '--repo', repo], { env: e });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `svc: ${repo} is on svc/DEMO-6, a branch svc gives an agent: its rules and files are the agent's, not yours; switch back to your branch (git switch <branch>) and run again\n`,
    );
    expect(existsSync(join(e.SVC_STATE_DIR!, 'runs'))).toBe(false);
  });
});

// svc's own user: a pool agent works in a clone of its own and cannot leave the checkout dirty.
it('says so when it cannot put the checkout back, and keeps what is there', async () => {
  const repo = await checkout();
  const agent = script(`echo mine > notes.txt\ngit add notes.txt\ngit ${ID} commit -qm "$SVC_CARD_KEY: notes"\necho changed > notes.txt`);
  const r = await svcInProcess(['run', 'DEMO-6', '--no-worktree', '--allow-empty', '--agent-cmd', agent, '--repo', repo], {
    env: isolatedEnv({ SVC_BASE_URL: server.url, SVC_TOKEN: server.token }),
  });
  expect(r.stderr).toMatch(new RegExp(`warning: ${repo} stays on svc/DEMO-6: git could not switch back to main \\(.+\\); run git switch main there\\n`));
  expect(readFileSync(join(repo, 'notes.txt'), 'utf8')).toBe('changed\n');
});
