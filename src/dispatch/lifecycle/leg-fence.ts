// A leg's egress fence as the leg sees it (docs/trust.md; the fence itself is ../fence/): put up
// after setup, for the agent, verify and teardown; taken down once every process of the uid is
// gone. Each refusal is a line in the leg's log and, with --send-logs, an event whose body is that
// line (the contract lets an event carry nothing else of it; docs/trust.md).
import type { FenceHooks, LegFence, LegNetwork } from '../fence/index.js';
import { refusalLine, type Refusal } from '../fence/refusal.js';

import type { LegLog } from '../wire/leg-log.js';
import type { LegContext } from '../leg-context.js';

export interface LegFencer {
  /** Puts the fence up: what the leg's programs get (its variables, and as a normal user their argv's namespace). */
  up(ownPorts: { first: number; count: number } | null): Promise<FenceHooks>;
  /** Takes it down (nothing if it never went up); fills `network.refused`. */
  down(): Promise<void>;
  network: LegNetwork;
}

/** The fencer of one leg run as `uid` (null: svc's own user), or null when its run's network is open. */
export function legFencer(ctx: LegContext, log: LegLog, uid: number | null): LegFencer | null {
  const policy = ctx.opts.network;
  if (!policy || policy.mode === 'open') return null;
  const mode = policy.mode;
  const network: LegNetwork = { mode, refused: [] };
  let fence: LegFence | null = null;
  // A refusal after the leg's log closed (the fence's last answers) is still in the report.
  const onRefused = (r: Refusal) => log.note(refusalLine(r));
  return {
    network,
    async up(ownPorts) {
      // Loaded here, for a leg that is fenced: its proxy and resolver bring node:http's server,
      // node:dgram and node:dns, which a run with an open network (a fleet's worker as svc's own
      // user) never needs at its start.
      const { fenceUp } = await import('../fence/index.js');
      fence = await fenceUp({ uid, mode, allow: policy.allow, ownPorts, onRefused });
      const { env, wrap } = fence;
      return wrap ? { env, wrap } : { env };
    },
    async down() {
      if (!fence) return;
      network.refused = await fence.down();
      fence = null;
    },
  };
}
