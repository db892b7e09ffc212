/**
 * The contract of a `JournalStore`, as one suite every store runs (memory, SQLite, and the stores to
 * come): the same cases, checked against a small model of what the interface promises.
 *
 * - append/read: a turn's entries come back in the order appended, as JSON data, whatever the other
 *   turns do; a turn never written reads empty.
 * - append is atomic: a batch with an entry that has no JSON form writes none of its entries.
 * - lease: taken when free, renewed by its owner, refused to others while live, taken over once
 *   expired; released only by its owner.
 * - consume: true the first time for a turn and nonce, false ever after.
 */
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { JournalEntry, JournalStore } from '../../src/index.js';

/** Opens a store for the suite; `reopen`, for a store that outlives its handle, opens it again. */
export interface StoreUnderTest {
  readonly store: JournalStore;
  readonly reopen?: () => JournalStore;
  readonly dispose?: () => void | Promise<void>;
}

/** What the store is: `durable` adds the case of a store closed and opened again (a memory store is not durable). */
export interface ContractOptions {
  readonly durable?: boolean;
}

const RUNS = Number(process.env.PROPERTY_RUNS ?? 200);

const entryArb: fc.Arbitrary<JournalEntry> = fc.oneof(
  fc.record({ kind: fc.constant('received' as const), index: fc.nat(50), id: fc.string(), name: fc.string(), args: fc.jsonValue(), at: fc.nat() }),
  fc.record({ kind: fc.constant('started' as const), index: fc.nat(50), at: fc.nat() }),
  fc.record({ kind: fc.constant('approval_answered' as const), index: fc.nat(50), answer: fc.constantFrom('allowed-once' as const, 'rejected' as const), at: fc.nat() }),
  fc.record({
    kind: fc.constant('finished' as const),
    index: fc.nat(50),
    result: fc.record({ status: fc.constantFrom('ok' as const, 'error' as const), content: fc.string({ unit: 'grapheme' }), value: fc.jsonValue(), started: fc.boolean() }),
    at: fc.nat(),
  }),
);

type Op =
  | { readonly op: 'append'; readonly turn: number; readonly entries: readonly JournalEntry[] }
  | { readonly op: 'appendBad'; readonly turn: number; readonly entries: readonly JournalEntry[]; readonly badAt: number }
  | { readonly op: 'read'; readonly turn: number }
  | { readonly op: 'lease'; readonly turn: number; readonly owner: number; readonly ms: number }
  | { readonly op: 'release'; readonly turn: number; readonly owner: number }
  | { readonly op: 'wait'; readonly ms: number }
  | { readonly op: 'consume'; readonly turn: number; readonly nonce: number };

const turnArb = fc.nat(2);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant('append' as const), turn: turnArb, entries: fc.array(entryArb, { maxLength: 4 }) }),
  fc.record({ op: fc.constant('appendBad' as const), turn: turnArb, entries: fc.array(entryArb, { minLength: 1, maxLength: 4 }), badAt: fc.nat(3) }),
  fc.record({ op: fc.constant('read' as const), turn: turnArb }),
  fc.record({ op: fc.constant('lease' as const), turn: turnArb, owner: fc.nat(2), ms: fc.integer({ min: 1, max: 100 }) }),
  fc.record({ op: fc.constant('release' as const), turn: turnArb, owner: fc.nat(2) }),
  fc.record({ op: fc.constant('wait' as const), ms: fc.nat(150) }),
  fc.record({ op: fc.constant('consume' as const), turn: turnArb, nonce: fc.nat(3) }),
);

/** What the interface promises, in a few lines: the oracle the store is compared with. */
class Model {
  readonly journals = new Map<string, unknown[]>();
  readonly leases = new Map<string, { owner: string; until: number }>();
  readonly used = new Set<string>();

  append(turn: string, entries: readonly JournalEntry[]): void {
    this.journals.set(turn, [...(this.journals.get(turn) ?? []), ...entries.map((entry) => JSON.parse(JSON.stringify(entry)))]);
  }
  lease(turn: string, owner: string, ms: number, now: number): boolean {
    const held = this.leases.get(turn);
    if (held !== undefined && held.owner !== owner && held.until > now) return false;
    this.leases.set(turn, { owner, until: now + ms });
    return true;
  }
  release(turn: string, owner: string): void {
    if (this.leases.get(turn)?.owner === owner) this.leases.delete(turn);
  }
  consume(turn: string, nonce: string): boolean {
    const key = JSON.stringify([turn, nonce]);
    if (this.used.has(key)) return false;
    this.used.add(key);
    return true;
  }
}

/** An entry no store can write: a BigInt has no JSON form. */
const unserialisable = (index: number): JournalEntry => ({ kind: 'received', index, id: 'x', name: 'x', args: { amount: 10n }, at: 0 });

/** Runs the contract against the stores `open` makes (one for the whole suite; each case uses turns of its own). */
export function journalStoreContract(name: string, open: () => StoreUnderTest | Promise<StoreUnderTest>, options: ContractOptions = {}): void {
  describe(`JournalStore contract: ${name}`, () => {
    let subject: StoreUnderTest;
    let store: JournalStore;
    let clock = 1_700_000_000_000;
    let run = 0;

    beforeAll(async () => {
      subject = await open();
      store = subject.store;
    });
    afterAll(async () => {
      await store.close?.();
      await subject.dispose?.();
    });
    afterEach(() => {
      vi.restoreAllMocks();
    });
    const useClock = () => vi.spyOn(Date, 'now').mockImplementation(() => clock);

    it('a turn never written reads empty; an empty append writes nothing', async () => {
      expect(await store.read('never written')).toEqual([]);
      await store.append('empty', []);
      expect(await store.read('empty')).toEqual([]);
    });

    it('keeps each turn\'s entries in the order appended, as JSON data', async () => {
      const received: JournalEntry = { kind: 'received', index: 0, id: 'c1', name: 'write', args: { path: 'a', nested: [1, { b: null }] }, at: 1 };
      const started: JournalEntry = { kind: 'started', index: 0, at: 2 };
      await store.append('order/a', [received]);
      await store.append('order/b', [{ kind: 'started', index: 7, at: 3 }]);
      await store.append('order/a', [started, { kind: 'finished', index: 0, result: { status: 'ok', content: 'done', value: 'done', started: true }, at: 4 }]);
      const read = await store.read('order/a');
      expect(read.map((entry) => entry.kind)).toEqual(['received', 'started', 'finished']);
      expect(read[0]).toEqual(received);
      expect(read[0]).not.toBe(received); // a copy, not the object appended
      expect(await store.read('order/b')).toEqual([{ kind: 'started', index: 7, at: 3 }]);
    });

    it('an append is atomic: a batch with an entry that has no JSON form writes none of it', async () => {
      await store.append('atomic', [{ kind: 'started', index: 0, at: 1 }]);
      await expect(async () => store.append('atomic', [{ kind: 'started', index: 1, at: 2 }, unserialisable(2), { kind: 'started', index: 3, at: 3 }])).rejects.toThrow();
      expect(await store.read('atomic')).toEqual([{ kind: 'started', index: 0, at: 1 }]);
    });

    it('a lease: taken when free, renewed by its owner, refused to others until it expires or is released', async () => {
      useClock();
      expect(await store.lease('lease', 'a', 100)).toBe(true);
      expect(await store.lease('lease', 'b', 100)).toBe(false);
      clock += 60;
      expect(await store.lease('lease', 'a', 100)).toBe(true); // renewed: now lives until +160
      clock += 60;
      expect(await store.lease('lease', 'b', 100)).toBe(false);
      await store.release('lease', 'b'); // not b's to give up
      expect(await store.lease('lease', 'b', 100)).toBe(false);
      clock += 40; // the renewed lease expires exactly now
      expect(await store.lease('lease', 'b', 100)).toBe(true);
      expect(await store.lease('lease', 'a', 100)).toBe(false);
      await store.release('lease', 'b');
      expect(await store.lease('lease', 'a', 100)).toBe(true);
      expect(await store.lease('other lease', 'b', 100)).toBe(true); // leases are per turn
    });

    it('consume: true the first time for a turn and nonce, false ever after', async () => {
      expect(await store.consume('consume', 'n1')).toBe(true);
      expect(await store.consume('consume', 'n1')).toBe(false);
      expect(await store.consume('consume', 'n2')).toBe(true);
      expect(await store.consume('consume/other', 'n1')).toBe(true); // nonces are per turn
      expect(await store.consume('consume', 'n1')).toBe(false);
    });

    it('property: any sequence of appends, reads, leases, releases, waits and consumes behaves as the model', async () => {
      useClock();
      await fc.assert(
        fc.asyncProperty(fc.array(opArb, { maxLength: 40 }), async (ops) => {
          const prefix = `property ${run++}/`;
          const turn = (n: number) => `${prefix}${n}`;
          const model = new Model();
          for (const op of ops) {
            switch (op.op) {
              case 'append':
                await store.append(turn(op.turn), op.entries);
                model.append(turn(op.turn), op.entries);
                break;
              case 'appendBad': {
                const entries = [...op.entries];
                entries.splice(Math.min(op.badAt, entries.length), 0, unserialisable(0));
                await expect(async () => store.append(turn(op.turn), entries)).rejects.toThrow();
                break;
              }
              case 'read':
                expect(await store.read(turn(op.turn))).toEqual(model.journals.get(turn(op.turn)) ?? []);
                break;
              case 'lease':
                expect(await store.lease(turn(op.turn), `owner ${op.owner}`, op.ms)).toBe(model.lease(turn(op.turn), `owner ${op.owner}`, op.ms, clock));
                break;
              case 'release':
                await store.release(turn(op.turn), `owner ${op.owner}`);
                model.release(turn(op.turn), `owner ${op.owner}`);
                break;
              case 'wait':
                clock += op.ms;
                break;
              case 'consume':
                expect(await store.consume(turn(op.turn), `nonce ${op.nonce}`)).toBe(model.consume(turn(op.turn), `nonce ${op.nonce}`));
                break;
            }
          }
          for (const n of [0, 1, 2]) expect(await store.read(turn(n))).toEqual(model.journals.get(turn(n)) ?? []);
        }),
        { numRuns: RUNS },
      );
    });

    if (options.durable === true) {
      it('a durable store keeps entries, leases and used nonces when reopened', async () => {
        if (subject.reopen === undefined) throw new Error('a durable store under test needs reopen()');
        useClock();
        await store.append('reopen', [{ kind: 'started', index: 0, at: 1 }]);
        expect(await store.lease('reopen', 'a', 1_000)).toBe(true);
        expect(await store.consume('reopen', 'n')).toBe(true);
        await store.close?.();
        store = subject.reopen();
        expect(await store.read('reopen')).toEqual([{ kind: 'started', index: 0, at: 1 }]);
        expect(await store.lease('reopen', 'b', 1_000)).toBe(false);
        expect(await store.consume('reopen', 'n')).toBe(false);
      });
    }
  });
}
