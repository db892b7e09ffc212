import { setTimeout as sleep } from 'node:timers/promises';
import { interval, map, Observable, take } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { streamItems } from '../../src/bullmq/streamItems.js';

/** A write that lands after `ms`, or fails after `ms` for the items `fails` picks; `landed` counts the ones that landed. */
function slowWrites(ms: number, fails: (item: unknown) => boolean = () => false) {
  const landed: unknown[] = [];
  const write = async (item: unknown) => {
    await sleep(ms);
    if (fails(item)) throw new Error(`write of ${String(item)} failed`);
    landed.push(item);
  };
  return { landed, write };
}

describe("streamItems: a worker's streamed output written in order, within a window", () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  beforeEach(() => {
    unhandled.length = 0;
    process.on('unhandledRejection', onUnhandled);
  });
  afterEach(() => {
    process.off('unhandledRejection', onUnhandled);
  });

  it('a body that fails midway fails only after the items it yielded are written', async () => {
    const { landed, write } = slowWrites(20);
    async function* body() {
      yield 0;
      yield 1;
      yield 2;
      throw new Error('failed after 3 items');
    }
    const seen = await streamItems(body(), write, 64, new AbortController().signal).then(
      () => 'resolved',
      (error: unknown) => ({ error: String(error), landedWhenFailed: [...landed] }),
    );
    expect(seen).toEqual({ error: 'Error: failed after 3 items', landedWhenFailed: [0, 1, 2] });
  });

  it('a write that fails while an earlier one is pending fails the stream, not the process', async () => {
    const writes = new Map<unknown, number>([[0, 30], [1, 1]]);
    const write = async (item: unknown) => {
      await sleep(writes.get(item) ?? 1);
      if (item === 1) throw new Error('write of 1 failed');
    };
    async function* body() {
      for (let i = 0; i < 6; i++) {
        yield i;
        await sleep(5);
      }
    }
    const failure = await streamItems(body(), write, 3, new AbortController().signal).catch((error: unknown) => error);
    await sleep(50); // an unhandled rejection is reported after a turn or two
    expect(String(failure)).toBe('Error: write of 1 failed');
    expect(unhandled).toEqual([]);
  });

  it('an Observable whose write fails is unsubscribed, and the stream fails with that write', async () => {
    let taken = 0;
    const { write } = slowWrites(1, (item) => item === 2);
    const output = interval(2).pipe(map((i) => (taken++, i)));
    const failure = await streamItems(output, write, 64, new AbortController().signal).catch((error: unknown) => error);
    const takenAtFailure = taken;
    await sleep(30);
    expect(String(failure)).toBe('Error: write of 2 failed');
    expect(taken).toBe(takenAtFailure); // nothing more was taken
    expect(unhandled).toEqual([]);
  });

  it('an Observable that never ends fails with the reason once the signal aborts, its items written', async () => {
    const { landed, write } = slowWrites(1);
    const controller = new AbortController();
    const output = new Observable<number>((subscriber) => {
      subscriber.next(0);
      subscriber.next(1); // and never completes
    });
    setTimeout(() => controller.abort(new Error('cancelled by the agent')), 20);
    const hung = sleep(1000).then(() => 'hung');
    const outcome = await Promise.race([streamItems(output, write, 64, controller.signal).catch((error: unknown) => String(error)), hung]);
    expect(outcome).toBe('Error: cancelled by the agent');
    expect(landed).toEqual([0, 1]);
  });

  it('an aborted Observable fails only once the items it emitted before are written, a full window too', async () => {
    const { landed, write } = slowWrites(40);
    const controller = new AbortController();
    const output = new Observable<number>((subscriber) => {
      subscriber.next(0); // its write fills the window of 1: item 1 waits for it
      subscriber.next(1);
    });
    setTimeout(() => controller.abort(new Error('timed out')), 10);
    const seen = await streamItems(output, write, 1, controller.signal).catch((error: unknown) => ({ error: String(error), landedWhenFailed: [...landed] }));
    expect(seen).toEqual({ error: 'Error: timed out', landedWhenFailed: [0, 1] });
  });

  it('counts every item and resolves once all are written, in order', async () => {
    const { landed, write } = slowWrites(1);
    expect(await streamItems(interval(0).pipe(take(200)), write, 8, new AbortController().signal)).toBe(200);
    expect(landed).toEqual(Array.from({ length: 200 }, (_, i) => i));
  });
});
