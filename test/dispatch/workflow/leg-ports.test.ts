// Ports against a hostile leg (item 3), as root through the default pool, with real legs
// against the real local service: an agent that holds every name the old lock used squats on
// nothing, and one that binds another leg's port makes that leg fail with the reason instead of
// answering its check. Neither can read the lease place.
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_POOL } from '../../../src/dispatch/boundary/user.js';
import { runDispatch } from '../../../src/dispatch/lifecycle/dispatch.js';
import { EMPTY_WORKFLOW, type Workflow } from '../../../src/dispatch/workflow/policy.js';
import { PORT_RANGE } from '../../../src/dispatch/workflow/ports.js';
import { run } from '../../support/cli.js';
import { engineEachTest } from '../../support/engine.js';

const isRoot = process.getuid?.() === 0;
const COMMIT = 'git -c user.name=agent -c user.email=agent@example.invalid commit -q';
const NODE = process.execPath;
const wf = (over: Partial<Workflow>): Workflow => ({ ...EMPTY_WORKFLOW, timeouts: { ...EMPTY_WORKFLOW.timeouts }, ...over });

/** A folder every user may read and write: the agents' scripts and their signals to each other. */
function gate(): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-port-gate-'));
  chmodSync(dir, 0o777);
  return dir;
}

function file(dir: string, name: string, body: string): string {
  writeFileSync(join(dir, name), body, { mode: 0o755 });
  return join(dir, name);
}

/** Shell that waits (at most 30 s) until `path` exists. */
const waitFor = (path: string) => `i=0; while [ ! -e ${path} ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done`;

const h = engineEachTest();

describe.skipIf(!isRoot)('ports against a hostile leg (root, the default pool)', () => {
  it('a leg holding every \\0svc-port-N name of the range does not keep the next run from its ports', async () => {
    const g = gate();
    const squat = file(
      g,
      'squat.js',
      `const net = require('node:net'); let left = ${PORT_RANGE.end - PORT_RANGE.first};
       for (let p = ${PORT_RANGE.first}; p < ${PORT_RANGE.end}; p++)
         net.createServer().listen('\\0svc-port-' + p, () => { if (--left === 0) require('node:fs').writeFileSync(${JSON.stringify(join(g, 'bound'))}, ''); });
       setTimeout(() => {}, 60_000);`,
    );
    const squatter = h.item('task', 'Squats on the range');
    const agentA = file(g, 'a.sh', `${NODE} ${squat} &\n${waitFor(join(g, 'release'))}\n${COMMIT} --allow-empty -m "$SVC_CARD_KEY: squatted"\n`);
    const first = runDispatch(h.opts({ keys: [squatter], agentUser: DEFAULT_POOL, agent: { agentCmd: `sh ${agentA}` } }), h.deps());
    try {
      await expect.poll(() => existsSync(join(g, 'bound')), { timeout: 30_000 }).toBe(true);
      expect(readFileSync('/proc/net/unix', 'utf8')).toContain(`@svc-port-${PORT_RANGE.end - 1}\n`);
      const key = h.item('task', 'Needs two ports');
      const agentB = file(g, 'b.sh', `echo "$SVC_PORT" > port.txt\ngit add port.txt\n${COMMIT} -m "$SVC_CARD_KEY: port"\n`);
      const next = await runDispatch(
        h.opts({ keys: [key], agentUser: DEFAULT_POOL, agent: { agentCmd: `sh ${agentB}` }, workflow: wf({ ports: 2 }) }),
        h.deps(),
      );
      expect(next.legs[0]).toMatchObject({ disposition: 'implemented' });
      const port = Number((await run('git', ['show', `svc/${key}:port.txt`], h.repo)).trim());
      expect(port >= PORT_RANGE.first && port + 2 <= PORT_RANGE.end).toBe(true);
    } finally {
      writeFileSync(join(g, 'release'), '');
    }
    expect((await first).legs[0]).toMatchObject({ disposition: 'implemented' });
  });

  it.each([
    ['before', 'victim-port'],
    ['during', 'verify-started'],
  ])(
    'a leg that binds another leg\'s port %s its check makes that leg fail with the reason, never "check passed"; the lease place is closed to it',
    async (_when, signal) => {
      const g = gate();
      const attacker = h.item('task', 'Attacker');
      const victim = h.item('task', 'Victim');
      // The stranger's server answers whoever asks; the victim's check asks its own SVC_PORT.
      const serve = file(
        g,
        'serve.js',
        `const port = Number(require('node:fs').readFileSync(${JSON.stringify(join(g, 'victim-port'))}, 'utf8'));
       require('node:net').createServer((s) => s.end('stranger\\n')).listen(port, '127.0.0.1', () => require('node:fs').writeFileSync(${JSON.stringify(join(g, 'bound'))}, ''));
       setTimeout(() => {}, 60_000);`,
      );
      const ask = file(
        g,
        'ask.js',
        `const s = require('node:net').connect(Number(process.env.SVC_PORT), '127.0.0.1');
       s.on('data', (d) => { console.log('answered: ' + d); process.exit(0); }); s.on('error', () => process.exit(1));`,
      );
      const agent = file(
        g,
        'agent.sh',
        `case "$SVC_CARD_KEY" in
${attacker})
  { ls /run/svc-ports /tmp/svc-ports; cat /run/svc-ports/$SVC_PORT; } > ${g}/looked.txt 2>&1
  ${waitFor(join(g, signal))}
  ${NODE} ${serve} &
  ${waitFor(join(g, `${victim}-done`))} ;;
${victim})
  echo "$SVC_PORT" > ${g}/victim-port.new && mv ${g}/victim-port.new ${g}/victim-port
  [ ${signal} = verify-started ] || ${waitFor(join(g, 'bound'))} ;;
esac
${COMMIT} --allow-empty -m "$SVC_CARD_KEY: done"
`,
      );
      const s = await runDispatch(
        h.opts({
          keys: [attacker, victim],
          parallel: 2,
          agentUser: DEFAULT_POOL,
          agent: { agentCmd: `sh ${agent}` },
          workflow: wf({
            ports: 1,
            // The check starts the attack in the second case: bound after svc's look before it.
            verify: `[ "$SVC_CARD_KEY" = ${attacker} ] || { touch ${g}/verify-started; ${waitFor(join(g, 'bound'))}; ${NODE} ${ask}; }`,
            teardown: [`touch ${g}/$SVC_CARD_KEY-done`],
          }),
        }),
        h.deps(),
      );
      expect(existsSync(join(g, 'bound'))).toBe(true);
      const port = Number(readFileSync(join(g, 'victim-port'), 'utf8'));
      const legOf = (key: string) => s.legs.find((l) => l.key === key)!;
      expect(legOf(victim)).toMatchObject({ disposition: 'failed', reason: `port ${port} is already in use by another process` });
      expect(legOf(victim).check?.status).not.toBe('passed');
      expect(legOf(attacker)).toMatchObject({ disposition: 'implemented' });
      // Where the leases live, the agent can neither list nor read.
      const looked = readFileSync(join(g, 'looked.txt'), 'utf8');
      expect(looked).toMatch(/ls: cannot open directory '\/run\/svc-ports': Permission denied/);
      expect(looked).toMatch(/cat: \/run\/svc-ports\/\d+: Permission denied/);
      expect(looked).not.toMatch(/^\d+$/m);
    },
  );
});
