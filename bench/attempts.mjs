// 7. Best-of-N: `svc run KEY --attempts 4 --parallel 4` on one card against `svc run` of
// 4 cards with `--parallel 4`, each agent sleeping 2 s and committing, the check `true`. The attempts
// are real parallel legs, not a loop: the same wall time within 1.1× (a loop would be 4×).
// `--all-attempts` keeps all four running to their end, so both sides do the same work. Measured
// with agents as svc's own user and, as root, through the default agent pool (a uid and a clone
// each); the rounds alternate which side goes first, and the median of each is compared.
import os from 'node:os';
import { makeRepo, median, row, runSvc, startService, summaryOf, svcEnv, x } from './lib.mjs';

const ROUNDS = Number(process.env.BENCH_ATTEMPT_ROUNDS ?? 5);
const GOAL = 1.1;
const AGENT = `sh -c 'sleep 2 && git -c user.name=agent -c user.email=agent@example.invalid commit -q --allow-empty -m "$SVC_CARD_KEY: done"'`;

async function measure(service, keys, extra, agentUser) {
  const env = svcEnv(service);
  if (agentUser === 'pool') delete env.SVC_AGENT_USER;
  const args = ['run', ...keys, '--agent-cmd', AGENT, '--repo', makeRepo(), '--verify', 'true', '--parallel', '4', '--json', ...extra];
  const r = await runSvc(args, { env, timeoutMs: 120_000 });
  const s = summaryOf(r);
  if (r.code !== 0 || s.legs.some((l) => l.disposition !== 'implemented')) throw new Error(`a run failed (exit ${r.code}): ${r.stderr.slice(-800)}`);
  return r.wallMs;
}

export async function attempts() {
  const service = await startService();
  const card = () => service.admin.createWorkItem({ projectKey: service.projectKey, kind: 'task', type: 'code', title: 'Bench card' }).key;
  const users = ['none', ...(process.getuid?.() === 0 ? ['pool'] : [])];
  const rows = [];
  try {
    for (const user of users) {
      const one = [];
      const four = [];
      for (let i = 0; i < ROUNDS; i++) {
        const sides = [
          async () => one.push(await measure(service, [card()], ['--attempts', '4', '--all-attempts'], user)),
          async () => four.push(await measure(service, [card(), card(), card(), card()], [], user)),
        ];
        if (i % 2) sides.reverse();
        for (const side of sides) await side();
      }
      const ratio = median(one) / median(four);
      rows.push(
        row(
          `--attempts 4 on one card vs 4 cards, --parallel 4 (agents as ${user === 'pool' ? 'the default pool' : 'svc'}): wall time ratio`,
          x(ratio),
          `≤ ${GOAL}×`,
          ratio <= GOAL,
          `median ${(median(one) / 1000).toFixed(2)} s vs ${(median(four) / 1000).toFixed(2)} s over ${ROUNDS} rounds; a loop would be 4×; load ${os.loadavg()[0].toFixed(1)}`,
        ),
      );
    }
  } finally {
    await service.close();
  }
  return rows;
}
