import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OpenCalls, type CallKeys } from '../../../src/adapters/openai/openCalls.js';

/** The rule, read off a plain list (what the adapter did before, one scan per event). */
function findInList(list: readonly CallKeys[], itemId: string | undefined, outputIndex: number | undefined): CallKeys | undefined {
  return (
    (itemId === undefined ? undefined : list.find((call) => call.itemId === itemId)) ??
    list.find((call) => outputIndex !== undefined && call.outputIndex === outputIndex && (itemId === undefined || call.itemId === undefined))
  );
}

describe('OpenCalls: the open calls of a Responses stream, indexed', () => {
  it('finds what a scan of the list in order finds, whatever is added, looked up and removed', () => {
    // Few distinct keys, so collisions (two calls with one item id or output index) are common.
    const itemId = fc.option(fc.constantFrom('fc_1', 'fc_2', 'fc_3'), { nil: undefined });
    const outputIndex = fc.option(fc.nat(3), { nil: undefined });
    const op = fc.oneof(
      fc.record({ kind: fc.constant('add' as const), callId: fc.constantFrom('a', 'b', 'c', 'd', 'e'), itemId, outputIndex }),
      fc.record({ kind: fc.constant('find' as const), itemId, outputIndex }),
      fc.record({ kind: fc.constant('delete' as const), nth: fc.nat(5) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        const open = new OpenCalls<CallKeys>();
        const list: CallKeys[] = [];
        for (const step of ops) {
          if (step.kind === 'add') {
            if (open.has(step.callId)) continue; // the adapter adds a call_id once
            const call = { callId: step.callId, itemId: step.itemId, outputIndex: step.outputIndex };
            open.add(call);
            list.push(call);
          } else if (step.kind === 'find') {
            expect(open.find(step.itemId, step.outputIndex)).toBe(findInList(list, step.itemId, step.outputIndex));
          } else if (list.length > 0) {
            const call = list.splice(step.nth % list.length, 1)[0]!;
            open.delete(call);
          }
          expect(open.list()).toEqual(list);
          expect(open.size).toBe(list.length);
          for (const call of list) expect(open.get(call.callId)).toBe(call);
        }
      }),
    );
  });
});
