import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, type ToolContext } from '../../src/index.js';
import { CallRecord } from '../../src/engine/records/callRecord.js';
import { ATTEMPT, attemptOf } from '../../src/engine/records/callSlots.js';
import { callKey, slotsOf, toolKey, traitOf, withTrait } from '../../src/util/slots.js';

const record = (index = 0) => new CallRecord(index, `c${index}`, 'tool', {}, 0);
/** What a record allocated for slots (and for its other rarely used state): nothing until a set. */
const extrasOf = (r: CallRecord) => (r as unknown as { extras?: { slots?: Map<symbol, unknown> } }).extras;

describe('per-call slots on the record', () => {
  it('gives back what was set, under its key only, for its call only', () => {
    const WHERE = callKey<{ turn: string }>('test.slots.where');
    const COUNT = callKey<number>('test.slots.count');
    const [a, b] = [record(0), record(1)];
    expect(a.get(WHERE)).toBeUndefined();
    a.set(WHERE, { turn: 't' });
    a.slots.set(COUNT, 0); // the slots are the record's, typed narrower
    b.set(COUNT, 2);
    expect([a.get(WHERE), a.get(COUNT), b.get(WHERE), b.get(COUNT)]).toEqual([{ turn: 't' }, 0, undefined, 2]);
    a.set(COUNT, 1); // one writer per key: a set replaces
    expect([a.slots.get(COUNT), b.slots.get(COUNT)]).toEqual([1, 2]);
  });

  it('allocates nothing until the first set, then one Map for every key', () => {
    const r = record();
    const KEY = callKey<string>('test.slots.lazy');
    expect(r.get(KEY)).toBeUndefined();
    expect(extrasOf(r)).toBeUndefined();
    r.set(KEY, 'x');
    const map = extrasOf(r)?.slots;
    expect(map).toBeInstanceOf(Map);
    r.set(callKey<string>('test.slots.other'), 'y');
    expect(extrasOf(r)?.slots).toBe(map);
    expect(map?.size).toBe(2);
  });

  it('keys of the same name are the same key (as in the other build of the library), others are not', () => {
    const r = record();
    r.set(callKey<string>('test.slots.shared'), 'set by one build');
    expect(r.get(callKey<string>('test.slots.shared'))).toBe('set by one build');
    expect(r.get(callKey<string>('test.slots.shared2'))).toBeUndefined();
    expect(callKey('test.slots.shared').id).toBe(Symbol.for('test.slots.shared'));
    expect(Object.isFrozen(callKey('test.slots.shared'))).toBe(true);
  });

  it('refuses a set of the engine-answered ATTEMPT', () => {
    expect(() => record().set(ATTEMPT, 3)).toThrow(/answered by the engine/);
  });

  it('property: any sequence of sets and gets over some records and keys behaves as one Map per record', () => {
    const keys = ['a', 'b', 'c'].map((name) => callKey<number>(`test.slots.model.${name}`));
    const op = fc.record({ at: fc.nat(2), key: fc.nat(2), value: fc.option(fc.integer(), { nil: undefined }) });
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        const records = [record(0), record(1), record(2)];
        const model = records.map(() => new Map<number, number>());
        for (const { at, key, value } of ops) {
          if (value === undefined) expect(records[at]!.get(keys[key]!)).toBe(model[at]!.get(key));
          else (records[at]!.set(keys[key]!, value), model[at]!.set(key, value));
        }
        records.forEach((r, at) => {
          expect(keys.map((key) => r.get(key))).toEqual([0, 1, 2].map((key) => model[at]!.get(key)));
          expect(extrasOf(r)?.slots === undefined).toBe(model[at]!.size === 0);
        });
      }),
    );
  });
});

describe("per-call slots from a body's ctx", () => {
  it("a ctx the pipeline did not make has none; the pipeline's shows a view, not the record, with the attempt", async () => {
    expect(slotsOf({ signal: new AbortController().signal } as ToolContext)).toBeUndefined();
    expect(attemptOf({} as ToolContext)).toBe(1);
    const seen: [number, boolean, number | undefined][] = [];
    const tool = defineTool({
      name: 'flaky',
      description: 'fails its first attempt',
      input: z.object({}),
      idempotent: true,
      retry: { attempts: 3, backoff: { initialMs: 1 } },
      execute: (_args, ctx) => {
        const view = slotsOf(ctx)!;
        seen.push([attemptOf(ctx), view instanceof CallRecord || 'status' in view, view.get(callKey('test.slots.unset'))]);
        if (attemptOf(ctx) < 2) throw new Error('first attempt fails');
        return 'ok';
      },
    });
    const [result] = await createPipeline({ tools: [tool] }).run([{ id: 'f', name: 'flaky', args: {} }]);
    expect(result).toMatchObject({ status: 'ok', attempts: 2 });
    expect(seen).toEqual([[1, false, undefined], [2, false, undefined]]);
  });
});

describe('tool traits', () => {
  const tool = defineTool({ name: 'plain', description: 'p', input: z.object({}), execute: () => 1 });
  const REMOTE = toolKey<true>('test.traits.remote');
  const OWNER = toolKey<string>('test.traits.owner');

  it('a trait is on a frozen copy, under its key only; the tool it was made from is untouched', () => {
    const marked = withTrait(tool, REMOTE, true);
    expect(marked).not.toBe(tool);
    expect(Object.isFrozen(marked)).toBe(true);
    expect([traitOf(marked, REMOTE), traitOf(marked, OWNER), traitOf(tool, REMOTE), traitOf(undefined, REMOTE)]).toEqual([true, undefined, undefined, undefined]);
    expect(marked.name).toBe('plain');
  });

  it('traits add up, survive a spread copy, and are found by a key of the same name', () => {
    const both = withTrait(withTrait(tool, REMOTE, true), OWNER, 'fleet');
    const copy = { ...both };
    expect([traitOf(copy, REMOTE), traitOf(copy, OWNER)]).toEqual([true, 'fleet']);
    expect(traitOf(both, toolKey<string>('test.traits.owner'))).toBe('fleet');
  });
});
