import { describe, expect, it } from 'vitest';
import { JournalWriter } from '../../src/durable/journalWriter.js';
import type { JournalEntry } from '../../src/types/journal.js';
import { Later } from '../../src/util/later.js';
import { deferred, type Deferred } from '../support/deferred.js';

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));
const started = (index: number): JournalEntry => ({ kind: 'started', index, at: 0 });
const indexes = (batch: readonly JournalEntry[]) => batch.map((entry) => (entry.kind === 'ended' ? -1 : entry.index));

/** A store's append that answers at once, as `memoryJournal` and `sqliteJournal` do. */
function syncStore() {
  const appends: number[][] = [];
  return { appends, append: (entries: readonly JournalEntry[]) => void appends.push(indexes(entries)) };
}

/** A store's append that answers when the test says: one `Deferred` per append, in order; counts overlaps. */
function asyncStore() {
  const appends: number[][] = [];
  const answers: Deferred<void>[] = [];
  let inFlight = 0;
  let overlapped = false;
  const append = (entries: readonly JournalEntry[]): Promise<void> => {
    appends.push(indexes(entries));
    overlapped ||= inFlight > 0;
    inFlight++;
    const answer = deferred();
    answers.push(answer);
    return answer.promise.finally(() => inFlight--);
  };
  return { appends, answers, append, overlapped: () => overlapped };
}

describe('JournalWriter `atOnce` (a virtual clock) on a store that answers at once', () => {
  it('durable() appends what is queued now and answers undefined: done, synchronously', () => {
    const store = syncStore();
    const writer = new JournalWriter(store.append, undefined, true);
    writer.write(started(0));
    writer.write(started(1));
    expect(writer.durable()).toBeUndefined();
    expect(store.appends).toEqual([[0, 1]]);
  });

  it('nothing queued: undefined, and no append', async () => {
    const store = syncStore();
    const writer = new JournalWriter(store.append, undefined, true);
    expect(writer.durable()).toBeUndefined();
    writer.write(started(0));
    writer.durable();
    expect(writer.durable()).toBeUndefined();
    await tick(); // the write's own flush a microtask later finds nothing left
    expect(store.appends).toEqual([[0]]);
  });

  it('entries nobody asked to be durable go in one append a microtask later', async () => {
    const store = syncStore();
    const writer = new JournalWriter(store.append, undefined, true);
    writer.write(started(0));
    writer.write(started(1));
    expect(store.appends).toEqual([]);
    await tick();
    expect(store.appends).toEqual([[0, 1]]);
  });

  it('an append that throws fails the writer: this durable() and every later one reject with that error, at once', () => {
    const disk = new Error('disk full');
    const appends: number[][] = [];
    const writer = new JournalWriter(
      (entries) => {
        appends.push(indexes(entries));
        throw disk;
      },
      undefined,
      true,
    );
    writer.write(started(0));
    const failed = writer.durable();
    expect(failed).toBeInstanceOf(Later);
    const seen: unknown[] = [];
    (failed as Later<void>).then(undefined, (error: unknown) => seen.push(error)); // a settled Later calls back now
    writer.write(started(1));
    (writer.durable() as Later<void>).then(undefined, (error: unknown) => seen.push(error));
    expect(seen).toEqual([disk, disk]);
    expect(appends).toEqual([[0]]); // nothing more is appended once failed
  });

  it('keeps the index a sub-batch maps its calls to', () => {
    const store = syncStore();
    const writer = new JournalWriter(store.append, (index) => index + 10, true);
    writer.write(started(0));
    writer.write({ kind: 'ended', at: 0 });
    writer.durable();
    expect(store.appends).toEqual([[10, -1]]);
  });
});

describe('JournalWriter on a real clock: batched per tick', () => {
  it('a store that answers at once: durable() waits for the tick, and what the tick brought goes in one append', async () => {
    const store = syncStore();
    const writer = new JournalWriter(store.append);
    writer.write(started(0));
    const first = writer.durable();
    writer.write(started(1));
    const second = writer.durable();
    expect(first).toBeInstanceOf(Later);
    expect(second).toBe(first);
    expect(store.appends).toEqual([]);
    let done = false;
    (first as Later<void>).then(() => (done = true));
    await Promise.resolve();
    expect(store.appends).toEqual([[0, 1]]);
    expect(done).toBe(true);
    expect(writer.durable()).toBeUndefined();
  });

  it('a failed append: what waited for the tick rejects, and nothing is appended after', async () => {
    const disk = new Error('disk full');
    const appends: number[][] = [];
    const writer = new JournalWriter((entries) => {
      appends.push(indexes(entries));
      throw disk;
    });
    writer.write(started(0));
    await expect(Promise.resolve(writer.durable())).rejects.toBe(disk);
    writer.write(started(1));
    await expect(Promise.resolve(writer.durable())).rejects.toBe(disk);
    await tick();
    expect(appends).toEqual([[0]]);
  });
});

describe('JournalWriter on a store that answers later', () => {
  it('batches what is written within one tick into one append', async () => {
    const store = asyncStore();
    const writer = new JournalWriter(store.append);
    writer.write(started(0));
    writer.write(started(1));
    writer.write(started(2));
    await tick();
    expect(store.appends).toEqual([[0, 1, 2]]);
  });

  it('`atOnce`: durable() resolves once the store answered; what is written meanwhile goes in one append right after, never overlapping', async () => {
    const store = asyncStore();
    const writer = new JournalWriter(store.append, undefined, true);
    writer.write(started(0));
    const first = writer.durable();
    expect(first).toBeInstanceOf(Later);
    expect(store.appends).toEqual([[0]]); // appended now: nothing was in flight
    writer.write(started(1));
    const second = writer.durable();
    writer.write(started(2));
    const third = writer.durable();
    expect(store.appends).toEqual([[0]]); // 1 and 2 wait for the append in flight
    let done = '';
    void Promise.resolve(first).then(() => (done += 'first '));
    void Promise.resolve(third).then(() => (done += 'third '));
    await tick();
    expect(done).toBe('');
    store.answers[0]!.resolve();
    await tick();
    expect(done).toBe('first ');
    expect(store.appends).toEqual([[0], [1, 2]]);
    expect(second).toBe(third); // both wait for the one append chained after the first
    store.answers[1]!.resolve();
    await tick();
    expect(done).toBe('first third ');
    expect(writer.durable()).toBeUndefined();
    expect(store.overlapped()).toBe(false);
  });

  it('a rejected append fails the writer: what waited for it rejects, and so does every later durable()', async () => {
    const store = asyncStore();
    const writer = new JournalWriter(store.append, undefined, true);
    writer.write(started(0));
    const first = Promise.resolve(writer.durable());
    writer.write(started(1));
    const chained = Promise.resolve(writer.durable());
    const disk = new Error('disk full');
    store.answers[0]!.reject(disk);
    await expect(first).rejects.toBe(disk);
    await expect(chained).rejects.toBe(disk);
    await expect(Promise.resolve(writer.durable())).rejects.toBe(disk);
    expect(store.appends).toEqual([[0]]);
  });
});
