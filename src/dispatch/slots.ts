// A counting semaphore, the one concurrency primitive of the engine: `--parallel N` legs hold N
// slots, and worktree changes hold the single slot of a mutex. Ours rather than p-limit's: the leg
// scheduler takes a slot *before* it decides whether a card starts (the item is re-read, the run
// may have stopped meanwhile) and gives it back from the leg's end, an acquire/release shape that
// task-queue libraries (p-limit, p-queue) do not expose. Waiters are served first come, first
// served, so cards start in their order.

/** Gives a slot back; calling it again is harmless. */
export type Release = () => void;

export class Slots {
  private free: number;
  private readonly waiting: Array<(release: Release) => void> = [];

  constructor(size: number) {
    this.free = Math.max(1, size);
  }

  /** Resolves with a slot once one is free, in the order of the calls. */
  acquire(): Promise<Release> {
    if (this.free > 0) {
      this.free--;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** Runs `fn` in a slot and gives the slot back however it ends. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    const release = await this.acquire();
    try {
      return await fn();
    } finally {
      release();
    }
  }

  private releaser(): Release {
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      // The slot passes straight to the next waiter, so nobody can overtake the queue.
      const next = this.waiting.shift();
      if (next) next(this.releaser());
      else this.free++;
    };
  }
}
