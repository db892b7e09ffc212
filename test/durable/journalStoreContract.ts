/**
 * The contract of a `JournalStore` (version 2: fenced leases and pruning), as one suite every store
 * runs (memory, SQLite, Redis, and the stores to come): the same cases, checked against a small model of
 * what the interface promises.
 *
 * - append/read: a key's entries come back in the order appended, as JSON data, whatever the other keys
 *   do; a key never written reads empty. A program's journal (`turn NUL callId`) is its turn's.
 * - append is atomic: a batch with an entry that has no JSON form writes none of its entries.
 * - append is fenced: it writes only while the lease it carries is the turn's current one (same owner,
 *   same epoch) — expired or not, as long as nobody took the turn since — and says so (`false`).
 * - leases: taken when free, expired or released, each take at a higher epoch; renewed and released
 *   only at their own epoch; refused to others while live; never taken back by a renewal.
 * - consume: true the first time for a turn and nonce, false ever after.
 * - prune: removes the turns whose journal ends with `ended` before the given time (with their
 *   programs, nonces and leases), never a live-leased one, a suspended one only with `'expired'` once
 *   its tokens have; and says how many.
 */
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { JournalEntry, JournalStore, PruneOptions, TurnLease } from '../../src/index.js';

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
/** Far enough in the future that every lease and token of a case has expired. */
const LATER = 10 ** 12;

const endedArb: fc.Arbitrary<JournalEntry> = fc.oneof(
  fc.record({ kind: fc.constant('ended' as const), at: fc.nat(1_000) }),
  fc.record({ kind: fc.constant('ended' as const), at: fc.nat(1_000), suspendedUntil: fc.nat(300) }),
);
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
  endedArb,
);

/** A turn (0-2), or a program's journal in it (a call id 'p' or 'q'). */
interface KeyRef {
  readonly turn: number;
  readonly program: 'p' | 'q' | undefined;
}
type Op =
  | { readonly op: 'append'; readonly key: KeyRef; readonly owner: number; readonly entries: readonly JournalEntry[] }
  | { readonly op: 'appendBad'; readonly key: KeyRef; readonly owner: number; readonly entries: readonly JournalEntry[]; readonly badAt: number }
  | { readonly op: 'read'; readonly key: KeyRef }
  | { readonly op: 'acquire'; readonly turn: number; readonly owner: number; readonly ms: number }
  | { readonly op: 'renew'; readonly turn: number; readonly owner: number; readonly ms: number }
  | { readonly op: 'release'; readonly turn: number; readonly owner: number }
  | { readonly op: 'wait'; readonly ms: number }
  | { readonly op: 'consume'; readonly turn: number; readonly nonce: number }
  | { readonly op: 'prune'; readonly finishedBefore: number; readonly suspended: 'keep' | 'expired' };

const turnArb = fc.nat(2);
const keyArb: fc.Arbitrary<KeyRef> = fc.record({ turn: turnArb, program: fc.constantFrom(undefined, 'p' as const, 'q' as const) });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant('append' as const), key: keyArb, owner: fc.nat(2), entries: fc.array(entryArb, { maxLength: 4 }) }) },
  fc.record({ op: fc.constant('appendBad' as const), key: keyArb, owner: fc.nat(2), entries: fc.array(entryArb, { minLength: 1, maxLength: 4 }), badAt: fc.nat(3) }),
  fc.record({ op: fc.constant('read' as const), key: keyArb }),
  { weight: 2, arbitrary: fc.record({ op: fc.constant('acquire' as const), turn: turnArb, owner: fc.nat(2), ms: fc.integer({ min: 1, max: 100 }) }) },
  fc.record({ op: fc.constant('renew' as const), turn: turnArb, owner: fc.nat(2), ms: fc.integer({ min: 1, max: 100 }) }),
  fc.record({ op: fc.constant('release' as const), turn: turnArb, owner: fc.nat(2) }),
  fc.record({ op: fc.constant('wait' as const), ms: fc.nat(150) }),
  fc.record({ op: fc.constant('consume' as const), turn: turnArb, nonce: fc.nat(3) }),
  fc.record({ op: fc.constant('prune' as const), finishedBefore: fc.nat(1_200), suspended: fc.constantFrom('keep' as const, 'expired' as const) }),
);

interface ModelLease {
  owner: string;
  until: number;
  epoch: number;
}

/** What the interface promises, in a few lines: the oracle the store is compared with. */
class Model {
  readonly journals = new Map<string, unknown[]>();
  readonly leases = new Map<string, ModelLease>();
  readonly used = new Set<string>();

  current(lease: TurnLease): boolean {
    const held = this.leases.get(lease.turn);
    return held !== undefined && held.owner === lease.owner && held.epoch === lease.epoch;
  }
  append(key: string, entries: readonly JournalEntry[], lease: TurnLease): boolean {
    if (entries.length === 0) return true; // nothing to write, nothing checked
    if (!this.current(lease)) return false;
    this.journals.set(key, [...(this.journals.get(key) ?? []), ...entries.map((entry) => JSON.parse(JSON.stringify(entry)))]);
    return true;
  }
  acquire(turn: string, owner: string, ms: number, now: number): number | undefined {
    const held = this.leases.get(turn);
    if (held !== undefined && held.owner !== '' && held.owner !== owner && held.until > now) return undefined;
    const epoch = (held?.epoch ?? 0) + 1;
    this.leases.set(turn, { owner, until: now + ms, epoch });
    return epoch;
  }
  renew(lease: TurnLease, ms: number, now: number): boolean {
    if (!this.current(lease)) return false;
    this.leases.get(lease.turn)!.until = now + ms;
    return true;
  }
  release(lease: TurnLease): void {
    if (this.current(lease)) this.leases.set(lease.turn, { owner: '', until: 0, epoch: lease.epoch });
  }
  consume(turn: string, nonce: string): boolean {
    const key = JSON.stringify([turn, nonce]);
    if (this.used.has(key)) return false;
    this.used.add(key);
    return true;
  }
  prune(turns: readonly string[], { finishedBefore, suspended }: Required<PruneOptions>, now: number): number {
    let removed = 0;
    for (const turn of turns) {
      const journal = (this.journals.get(turn) ?? []) as JournalEntry[];
      const last = journal[journal.length - 1];
      if (last?.kind !== 'ended' || !(last.at < finishedBefore)) continue;
      if (last.suspendedUntil !== undefined && !(suspended === 'expired' && last.suspendedUntil <= now)) continue;
      const held = this.leases.get(turn);
      if (held !== undefined && held.owner !== '' && held.until > now) continue;
      for (const key of [...this.journals.keys()]) if (key === turn || key.startsWith(`${turn}\u0000`)) this.journals.delete(key);
      this.leases.delete(turn);
      for (const used of [...this.used]) if ((JSON.parse(used) as string[])[0] === turn) this.used.delete(used);
      removed++;
    }
    return removed;
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
    /** Takes `turn`'s lease for `owner` (it must be free): the lease to write with. */
    const leaseOf = async (turn: string, owner = 'writer', ms = 60_000): Promise<TurnLease> => {
      const epoch = await store.acquire(turn, owner, ms);
      expect(epoch, `the lease of ${turn}`).toBeTypeOf('number');
      return { turn, owner, epoch: epoch! };
    };
    /** Removes every turn earlier cases left prunable, so a case's own counts are its own. */
    const drain = async () => {
      clock += LATER;
      await store.prune({ finishedBefore: Number.MAX_SAFE_INTEGER, suspended: 'expired' });
    };

    it('a key never written reads empty; an empty append writes nothing', async () => {
      expect(await store.read('never written')).toEqual([]);
      expect(await store.append('empty', [], await leaseOf('empty'))).toBe(true);
      expect(await store.read('empty')).toEqual([]);
    });

    it('keeps each key\'s entries in the order appended, as JSON data; a program\'s journal is apart from its turn\'s', async () => {
      const received: JournalEntry = { kind: 'received', index: 0, id: 'c1', name: 'write', args: { path: 'a', nested: [1, { b: null }] }, at: 1 };
      const started: JournalEntry = { kind: 'started', index: 0, at: 2 };
      const [a, b] = [await leaseOf('order/a'), await leaseOf('order/b')];
      expect(await store.append('order/a', [received], a)).toBe(true);
      expect(await store.append('order/b', [{ kind: 'started', index: 7, at: 3 }], b)).toBe(true);
      expect(await store.append('order/a\u0000call_1', [{ kind: 'started', index: 1, at: 3 }], a)).toBe(true);
      expect(await store.append('order/a', [started, { kind: 'finished', index: 0, result: { status: 'ok', content: 'done', value: 'done', started: true }, at: 4 }], a)).toBe(true);
      const read = await store.read('order/a');
      expect(read.map((entry) => entry.kind)).toEqual(['received', 'started', 'finished']);
      expect(read[0]).toEqual(received);
      expect(read[0]).not.toBe(received); // a copy, not the object appended
      expect(await store.read('order/b')).toEqual([{ kind: 'started', index: 7, at: 3 }]);
      expect(await store.read('order/a\u0000call_1')).toEqual([{ kind: 'started', index: 1, at: 3 }]);
      // A lease fences its own turn only: writing another turn's key with it is a caller's bug.
      await expect(async () => store.append('order/b', [started], a)).rejects.toThrow(TypeError);
    });

    it('an append is atomic: a batch with an entry that has no JSON form writes none of it', async () => {
      const lease = await leaseOf('atomic');
      await store.append('atomic', [{ kind: 'started', index: 0, at: 1 }], lease);
      await expect(async () => store.append('atomic', [{ kind: 'started', index: 1, at: 2 }, unserialisable(2), { kind: 'started', index: 3, at: 3 }], lease)).rejects.toThrow();
      expect(await store.read('atomic')).toEqual([{ kind: 'started', index: 0, at: 1 }]);
    });

    it('leases are fenced: each take a higher epoch; a lease taken over can neither renew, append nor release; nothing takes it back', async () => {
      useClock();
      expect(await store.acquire('lease', 'a', 100)).toBe(1);
      const a: TurnLease = { turn: 'lease', owner: 'a', epoch: 1 };
      expect(await store.acquire('lease', 'b', 100)).toBeUndefined();
      clock += 60;
      expect(await store.renew(a, 100)).toBe(true); // now lives until +160
      clock += 60;
      expect(await store.acquire('lease', 'b', 100)).toBeUndefined();
      await store.release({ turn: 'lease', owner: 'b', epoch: 1 }); // not b's to give up
      expect(await store.acquire('lease', 'b', 100)).toBeUndefined();
      clock += 41; // expired, nobody took it: a's writes still hold, a renewal revives it
      expect(await store.append('lease', [{ kind: 'started', index: 0, at: 1 }], a)).toBe(true);
      clock += 100;
      expect(await store.acquire('lease', 'b', 100)).toBe(2); // taken over
      const b: TurnLease = { turn: 'lease', owner: 'b', epoch: 2 };
      expect(await store.renew(a, 100)).toBe(false);
      expect(await store.append('lease', [{ kind: 'started', index: 1, at: 2 }], a)).toBe(false);
      await store.release(a); // stale: nothing happens
      expect(await store.acquire('lease', 'a', 100)).toBeUndefined();
      expect(await store.append('lease', [{ kind: 'started', index: 2, at: 3 }], b)).toBe(true);
      await store.release(b);
      expect(await store.renew(b, 100)).toBe(false); // released: a renewal does not take it back
      expect(await store.append('lease', [{ kind: 'started', index: 3, at: 4 }], b)).toBe(false);
      expect(await store.acquire('lease', 'a', 100)).toBe(3); // the epoch outlives the release
      expect(await store.acquire('lease', 'a', 100)).toBe(4); // its owner taking it again: a new epoch too
      expect(await store.renew({ turn: 'lease', owner: 'a', epoch: 3 }, 100)).toBe(false);
      // Its own older epoch is as stale as another owner's: a process that took its turn again writes only with the new lease.
      const older: TurnLease = { turn: 'lease', owner: 'a', epoch: 3 };
      expect(await store.append('lease', [{ kind: 'started', index: 4, at: 5 }], older)).toBe(false);
      await store.release(older); // stale: a at epoch 4 still holds the turn
      expect(await store.acquire('lease', 'b', 100)).toBeUndefined();
      expect(await store.append('lease', [{ kind: 'started', index: 5, at: 6 }], { turn: 'lease', owner: 'a', epoch: 4 })).toBe(true);
      expect(await store.acquire('other lease', 'b', 100)).toBe(1); // leases are per turn
      expect((await store.read('lease')).map((entry) => (entry as { index: number }).index)).toEqual([0, 2, 5]);
    });

    it('consume: true the first time for a turn and nonce, false ever after', async () => {
      expect(await store.consume('consume', 'n1')).toBe(true);
      expect(await store.consume('consume', 'n1')).toBe(false);
      expect(await store.consume('consume', 'n2')).toBe(true);
      expect(await store.consume('consume/other', 'n1')).toBe(true); // nonces are per turn
      expect(await store.consume('consume', 'n1')).toBe(false);
    });

    it('prune removes ended turns with their programs, nonces and leases — never one running, leased or still answerable', async () => {
      useClock();
      await drain();
      const start = clock;
      const end = (at: number, suspendedUntil?: number): JournalEntry => (suspendedUntil === undefined ? { kind: 'ended', at } : { kind: 'ended', at, suspendedUntil });
      const write = async (turn: string, entries: readonly JournalEntry[], release = true) => {
        const lease = await leaseOf(turn);
        expect(await store.append(turn, entries, lease)).toBe(true);
        if (release) await store.release(lease);
        return lease;
      };
      await write('prune/done', [{ kind: 'started', index: 0, at: start }, end(start + 1)]);
      const program = await leaseOf('prune/done');
      expect(await store.append('prune/done\u0000call_1', [{ kind: 'started', index: 0, at: start }], program)).toBe(true);
      await store.release(program);
      expect(await store.consume('prune/done', 'used')).toBe(true);
      await write('prune/young', [end(start + 50)]);
      await write('prune/running', [end(start + 1), { kind: 'started', index: 1, at: start + 2 }]); // resumed since it ended
      await write('prune/unended', [{ kind: 'started', index: 0, at: start }]);
      await write('prune/leased', [end(start + 1)], false);
      await write('prune/suspended', [end(start + 1, start + 30)]);
      await write('prune/suspended later', [end(start + 1, start + 500)]);
      await expect(async () => store.prune({ finishedBefore: 'yesterday' } as never)).rejects.toThrow(expect.objectContaining({ where: 'prune', option: 'finishedBefore' }));

      clock = start + 40;
      expect(await store.prune({ finishedBefore: start + 10 })).toBe(1);
      expect(await store.read('prune/done')).toEqual([]);
      expect(await store.read('prune/done\u0000call_1')).toEqual([]);
      expect(await store.consume('prune/done', 'used')).toBe(true); // its nonces went with it
      expect(await store.acquire('prune/done', 'x', 100)).toBe(1); // and its lease: a new turn of that id starts afresh
      for (const kept of ['prune/young', 'prune/running', 'prune/unended', 'prune/leased', 'prune/suspended', 'prune/suspended later']) {
        expect((await store.read(kept)).length, kept).toBeGreaterThan(0);
      }
      expect(await store.prune({ finishedBefore: start + 10, suspended: 'expired' })).toBe(1); // tokens until start + 30: gone
      expect(await store.read('prune/suspended')).toEqual([]);
      clock = start + 60_001; // the lease lapsed
      expect(await store.prune({ finishedBefore: start + 100 })).toBe(2); // leased, young
      expect((await store.read('prune/suspended later')).length).toBe(1);
      expect(await store.prune({ finishedBefore: start + 100 })).toBe(0);
    });

    it('property: any sequence of appends, reads, leases, waits, consumes and prunes behaves as the model', async () => {
      useClock();
      await fc.assert(
        fc.asyncProperty(fc.array(opArb, { maxLength: 40 }), async (ops) => {
          await drain();
          const prefix = `property ${run++}/`;
          const turn = (n: number) => `${prefix}${n}`;
          const keyOf = ({ turn: n, program }: KeyRef) => (program === undefined ? turn(n) : `${turn(n)}\u0000${program}`);
          /** The lease each owner last took of each turn (epoch 0: never took one). */
          const held = new Map<string, TurnLease>();
          const leaseAs = (n: number, owner: number): TurnLease => held.get(`${n}/${owner}`) ?? { turn: turn(n), owner: `owner ${owner}`, epoch: 0 };
          const model = new Model();
          for (const op of ops) {
            switch (op.op) {
              case 'append': {
                const lease = leaseAs(op.key.turn, op.owner);
                expect(await store.append(keyOf(op.key), op.entries, lease)).toBe(model.append(keyOf(op.key), op.entries, lease));
                break;
              }
              case 'appendBad': {
                const entries = [...op.entries];
                entries.splice(Math.min(op.badAt, entries.length), 0, unserialisable(0));
                await expect(async () => store.append(keyOf(op.key), entries, leaseAs(op.key.turn, op.owner))).rejects.toThrow();
                break;
              }
              case 'read':
                expect(await store.read(keyOf(op.key))).toEqual(model.journals.get(keyOf(op.key)) ?? []);
                break;
              case 'acquire': {
                const epoch = await store.acquire(turn(op.turn), `owner ${op.owner}`, op.ms);
                expect(epoch).toBe(model.acquire(turn(op.turn), `owner ${op.owner}`, op.ms, clock));
                if (epoch !== undefined) held.set(`${op.turn}/${op.owner}`, { turn: turn(op.turn), owner: `owner ${op.owner}`, epoch });
                break;
              }
              case 'renew':
                expect(await store.renew(leaseAs(op.turn, op.owner), op.ms)).toBe(model.renew(leaseAs(op.turn, op.owner), op.ms, clock));
                break;
              case 'release':
                await store.release(leaseAs(op.turn, op.owner));
                model.release(leaseAs(op.turn, op.owner));
                break;
              case 'wait':
                clock += op.ms;
                break;
              case 'consume':
                expect(await store.consume(turn(op.turn), `nonce ${op.nonce}`)).toBe(model.consume(turn(op.turn), `nonce ${op.nonce}`));
                break;
              case 'prune': {
                const options = { finishedBefore: op.finishedBefore, suspended: op.suspended };
                expect(await store.prune(options)).toBe(model.prune([0, 1, 2].map(turn), options, clock));
                break;
              }
            }
          }
          for (const n of [0, 1, 2]) {
            for (const program of [undefined, 'p', 'q'] as const) {
              expect(await store.read(keyOf({ turn: n, program }))).toEqual(model.journals.get(keyOf({ turn: n, program })) ?? []);
            }
          }
        }),
        { numRuns: RUNS },
      );
    });

    if (options.durable === true) {
      it('a durable store keeps entries, leases with their epochs, used nonces and what prune needs when reopened', async () => {
        if (subject.reopen === undefined) throw new Error('a durable store under test needs reopen()');
        useClock();
        await drain();
        const lease = await leaseOf('reopen', 'a', 1_000);
        await store.append('reopen', [{ kind: 'started', index: 0, at: 1 }], lease);
        await store.append('reopen/ended', [{ kind: 'ended', at: 1 }], await leaseOf('reopen/ended', 'a', 1));
        expect(await store.consume('reopen', 'n')).toBe(true);
        await store.close?.();
        store = subject.reopen();
        expect(await store.read('reopen')).toEqual([{ kind: 'started', index: 0, at: 1 }]);
        expect(await store.acquire('reopen', 'b', 1_000)).toBeUndefined();
        expect(await store.append('reopen', [{ kind: 'started', index: 1, at: 2 }], lease)).toBe(true);
        expect(await store.consume('reopen', 'n')).toBe(false);
        clock += 2_000;
        expect(await store.acquire('reopen', 'b', 1_000)).toBe(2);
        expect(await store.prune({ finishedBefore: 2 })).toBe(1);
      });
    }
  });
}
