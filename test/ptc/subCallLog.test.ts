import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SubCallLog, type SubDispatch } from '../../src/ptc/subCallLog.js';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 1000);

/** An entry as SubCalls hands it over, with `args` and an error message of the given sizes. */
function call(position: number, argsChars: number, messageChars: number | undefined): Omit<SubDispatch, 'argsChars'> {
  return {
    id: `p#${position + 1}`,
    name: 'write',
    args: { s: 'a'.repeat(Math.max(0, argsChars - 8)) }, // {"s":"…"}: 8 characters around the text
    decision: 'allow',
    status: messageChars === undefined ? 'ok' : 'error',
    error: messageChars === undefined ? undefined : { code: 'tool_error', message: 'm'.repeat(messageChars) },
    omitted: undefined,
    durationMs: 1,
  };
}

/** The note a cut message ends with (retainText's, or the log's own when nothing of it fits). */
const NOTE = /\n?\[\.\.\. \d+ characters? omitted\]$/;

describe('SubCallLog', () => {
  it('keeps the first entries, arguments whole while they fit, and counts the rest exactly', () => {
    const log = new SubCallLog({ maxEntries: 3, maxChars: 100 });
    log.add(0, call(0, 60, undefined)); // kept: 40 left
    log.add(2, call(2, 50, 30)); // args do not fit (50 > 40); the message does: 10 left
    log.add(1, call(1, 9, 25)); // args fit (1 left); the message is cut to 1 character
    log.add(3, call(3, 20, 7)); // past maxEntries: counted, not logged
    const { entries, omitted } = log.contents();
    expect(entries.map((entry) => [entry.id, entry.argsChars, entry.args === undefined, entry.error?.message])).toEqual([
      ['p#1', 60, false, undefined],
      ['p#2', 9, false, 'm\n[... 24 characters omitted]'],
      ['p#3', 50, true, 'm'.repeat(30)],
    ]);
    expect(omitted).toEqual({ entries: 1, characters: 50 + 24 + 20 + 7 });
  });

  it('replaces a message with its note when no room is left at all', () => {
    const log = new SubCallLog({ maxEntries: 10, maxChars: 8 });
    log.add(0, call(0, 8, 1));
    log.add(1, call(1, 8, 12));
    expect(log.contents().entries.map((entry) => entry.error?.message)).toEqual(['[... 1 character omitted]', '[... 12 characters omitted]']);
    expect(log.contents().omitted).toEqual({ entries: 0, characters: 8 + 1 + 12 });
  });

  it('leaves out arguments without a JSON form', () => {
    const log = new SubCallLog({ maxEntries: 10, maxChars: 1000 });
    log.add(0, { ...call(0, 10, undefined), args: { n: 1n } });
    expect(log.contents().entries[0]).toMatchObject({ args: undefined, argsChars: 0 });
  });

  it('property: within its bounds, and what it holds plus what it counts is everything it was given', () => {
    const calls = fc.array(fc.record({ args: fc.integer({ min: 8, max: 300 }), message: fc.option(fc.integer({ min: 0, max: 300 }), { nil: undefined }) }), { maxLength: 40 });
    fc.assert(
      fc.property(calls, fc.integer({ min: 0, max: 30 }), fc.integer({ min: 0, max: 2000 }), fc.infiniteStream(fc.nat()), (made, maxEntries, maxChars, picks) => {
        // Calls finish in any order; positions are the order they were made in.
        const pending = made.map((_, position) => position);
        const log = new SubCallLog({ maxEntries, maxChars });
        const iterator = picks[Symbol.iterator]();
        while (pending.length > 0) {
          const [position] = pending.splice(iterator.next().value % pending.length, 1) as [number];
          log.add(position, call(position, made[position]!.args, made[position]!.message));
        }
        const { entries, omitted } = log.contents();
        const logged = Math.min(made.length, maxEntries);
        expect(entries).toHaveLength(logged);
        expect(omitted.entries).toBe(made.length - logged);
        let held = 0;
        entries.forEach((entry, position) => {
          expect(entry.id).toBe(`p#${position + 1}`);
          expect(entry.argsChars).toBe(made[position]!.args);
          if (entry.args !== undefined) held += entry.argsChars;
          if (entry.error !== undefined) held += entry.error.message.replace(NOTE, '').length;
        });
        expect(held).toBeLessThanOrEqual(maxChars);
        const given = made.reduce((sum, { args, message }) => sum + args + (message ?? 0), 0);
        expect(held + omitted.characters).toBe(given);
      }),
      { numRuns: RUNS },
    );
  });
});
