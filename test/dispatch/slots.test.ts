// The engine's one concurrency primitive: the --parallel leg slots and the worktree mutex.
import { describe, expect, it } from 'vitest';
import { Slots } from '../../src/dispatch/slots.js';

/** A promise settled from outside, to hold a slot for exactly as long as a test wants. */
function gate(): { promise: Promise<void>; open(): void; fail(e: Error): void } {
  let open!: () => void;
  let fail!: (e: Error) => void;
  const promise = new Promise<void>((resolve, reject) => {
    open = resolve;
    fail = reject;
  });
  return { promise, open, fail };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('Slots', () => {
  it('never lets more than N hold a slot, and serves waiters in the order they came', async () => {
    const slots = new Slots(2);
    const gates = [gate(), gate(), gate(), gate(), gate()];
    let held = 0;
    let most = 0;
    const started: number[] = [];
    const runs = gates.map((g, i) =>
      slots.run(async () => {
        started.push(i);
        most = Math.max(most, ++held);
        await g.promise;
        held--;
        return i;
      }),
    );
    await settle();
    expect(started).toEqual([0, 1]);
    gates[1]!.open();
    await settle();
    expect(started).toEqual([0, 1, 2]);
    gates[0]!.open();
    await settle();
    expect(started).toEqual([0, 1, 2, 3]);
    for (const g of gates) g.open();
    expect(await Promise.all(runs)).toEqual([0, 1, 2, 3, 4]);
    expect(most).toBe(2);
  });

  it('as a mutex (size 1) runs the next only after the one before settled, even when it failed', async () => {
    const mutex = new Slots(1);
    const first = gate();
    const order: string[] = [];
    const a = mutex.run(async () => {
      order.push('a start');
      await first.promise;
      order.push('a end');
    });
    const b = mutex.run(async () => {
      order.push('b');
    });
    await settle();
    expect(order).toEqual(['a start']);
    first.fail(new Error('git said no'));
    await expect(a).rejects.toThrow('git said no');
    await b;
    expect(order).toEqual(['a start', 'b']);
  });

  it('acquire hands a release that frees exactly one slot however often it is called', async () => {
    const slots = new Slots(1);
    const release = await slots.acquire();
    let second = false;
    let third = false;
    const s2 = slots.acquire().then((r) => {
      second = true;
      return r;
    });
    const s3 = slots.acquire().then((r) => {
      third = true;
      return r;
    });
    release();
    release();
    await settle();
    expect([second, third]).toEqual([true, false]);
    (await s2)();
    await settle();
    expect(third).toBe(true);
    (await s3)();
  });

  it('treats a size below one as one: --parallel 0 still runs legs one at a time', async () => {
    const slots = new Slots(0);
    const release = await slots.acquire();
    let next = false;
    void slots.acquire().then(() => (next = true));
    await settle();
    expect(next).toBe(false);
    release();
    await settle();
    expect(next).toBe(true);
  });
});
