/** A grant callback waiting for a permit; its identity is its ticket. */
export type Grant = () => void;

/**
 * A keyed counting semaphore with first-come handoff: at most `max` permits per key are held at once;
 * a released permit goes straight to the key's oldest waiter (so no waiter starves behind newcomers),
 * and only when nobody waits does the count drop. Synchronous throughout, so it works under virtual
 * time. Internal machinery behind `Limiter` (see `src/schedule/limiter.ts`).
 */
export class Permits {
  private readonly held = new Map<string, number>();
  /** Waiters per key, in arrival order (a Set keeps insertion order and removes in O(1)). */
  private readonly waiters = new Map<string, Set<Grant>>();

  constructor(readonly max: number) {}

  /** Permits of `key` held now. */
  active(key: string): number {
    return this.held.get(key) ?? 0;
  }

  /** Waiters for `key` now. */
  waiting(key: string): number {
    return this.waiters.get(key)?.size ?? 0;
  }

  /** Takes a permit of `key` if one is free and nobody waits for one; true when taken. */
  tryAcquire(key: string): boolean {
    const held = this.held.get(key) ?? 0;
    if (held >= this.max || this.waiters.has(key)) return false;
    this.held.set(key, held + 1);
    return true;
  }

  /** Queues `grant` for the next permit of `key`; it is called (once) holding that permit. */
  wait(key: string, grant: Grant): void {
    let queue = this.waiters.get(key);
    if (queue === undefined) this.waiters.set(key, (queue = new Set()));
    queue.add(grant);
  }

  /** Withdraws a waiter that was not granted yet; false when it was not waiting. */
  withdraw(key: string, grant: Grant): boolean {
    const queue = this.waiters.get(key);
    if (queue === undefined || !queue.delete(grant)) return false;
    if (queue.size === 0) this.waiters.delete(key);
    return true;
  }

  /** Returns a permit of `key`: to the oldest waiter, else to the pool of free permits. */
  release(key: string): void {
    const queue = this.waiters.get(key);
    if (queue !== undefined) {
      const [next] = queue;
      queue.delete(next!);
      if (queue.size === 0) this.waiters.delete(key);
      next!(); // the permit passes to it: the count stays
      return;
    }
    const held = this.held.get(key) ?? 0;
    if (held <= 1) this.held.delete(key);
    else this.held.set(key, held - 1);
  }
}
