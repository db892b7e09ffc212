import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { durableJobId, refusal, shapeRefusal, signPayload, type UnsignedPayload } from '../../src/bullmq/jobPayload.js';

const secret = Buffer.from('the job payload tests sign with this secret');
const place = { jobId: 'ts-1', prefix: 'toolstream', queue: 'q' };
const payloadOf = (args: unknown): UnsignedPayload => ({ v: 2, tool: 't', args, callId: 'c', turn: null, index: 0, key: 'tsk-k', attempt: 1, deadline: null, expiresAt: 1_900_000_000_000, keepMs: 1000 });
/** What a worker receives: BullMQ's JSON round trip of the job's data. */
const roundTrip = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

describe('job payload signatures', () => {
  it('hold across the JSON round trip for any JSON arguments (key order, numbers, unicode, __proto__ keys)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (args) => {
        expect(refusal(secret, roundTrip(signPayload(secret, payloadOf(args), place)), place)).toBeUndefined();
      }),
      { numRuns: 500 },
    );
    const tricky = JSON.parse('{"b":1,"a":[1e21,-0,0.1,"\\u2028"],"__proto__":{"x":1}}') as unknown;
    expect(refusal(secret, roundTrip(signPayload(secret, payloadOf(tricky), place)), place)).toBeUndefined();
  });

  it('break when anything signed changes: an argument, a field, the place, the secret', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue(), { minKeys: 1 }), fc.jsonValue(), (args, other) => {
        const signed = roundTrip(signPayload(secret, payloadOf(args), place));
        const key = Object.keys(args)[0]!;
        fc.pre(JSON.stringify(other) !== JSON.stringify(args[key]));
        expect(refusal(secret, { ...signed, args: { ...signed.args as object, [key]: other } }, place)).toMatch(/signature/);
      }),
      { numRuns: 200 },
    );
    const signed = signPayload(secret, payloadOf({ a: 1 }), place);
    expect(refusal(secret, { ...signed, index: 1 }, place)).toMatch(/signature/);
    expect(refusal(secret, { ...signed, deadline: Date.now() }, place)).toMatch(/signature/);
    expect(refusal(secret, { ...signed, expiresAt: signed.expiresAt + 1 }, place)).toMatch(/signature/);
    expect(refusal(secret, { ...signed, attempt: 2 }, place)).toMatch(/signature/);
    expect(refusal(secret, signed, { ...place, jobId: 'ts-2' })).toMatch(/signature/);
    expect(refusal(secret, signed, { ...place, queue: 'other' })).toMatch(/signature/);
    expect(refusal(Buffer.from('another secret of at least thirty-two bytes'), signed, place)).toMatch(/signature/);
    expect(refusal(secret, { ...signed, sig: undefined }, place)).toBe('it is not signed');
  });

  it('a payload of another format version is refused by name: the version it has and the one the worker verifies', () => {
    const { expiresAt: _expiresAt, attempt: _attempt, ...v1 } = { ...signPayload(secret, payloadOf({ a: 1 }), place), v: 1 };
    expect(shapeRefusal(v1)).toBe('its payload is format version 1, and this worker verifies version 2 only (agents and workers of different toolstream versions, during an upgrade?)');
    expect(refusal(secret, { ...signPayload(secret, payloadOf({ a: 1 }), place), v: 3 }, place)).toMatch(/format version 3, and this worker verifies version 2 only/);
    expect(shapeRefusal({ ...payloadOf({}), expiresAt: undefined })).toMatch(/not a toolstream job/);
    expect(shapeRefusal('a string')).toBe('its data is not a toolstream job');
  });

  it('a durable job id is stable for a call, differs between calls, and is never an integer or has a ":"', () => {
    expect(durableJobId('conv/resp', 3)).toBe(durableJobId('conv/resp', 3));
    expect(durableJobId('conv/resp', 3)).not.toBe(durableJobId('conv/resp', 4));
    expect(durableJobId('a\u00001', 0)).not.toBe(durableJobId('a', 10));
    fc.assert(fc.property(fc.string(), fc.nat(), (turn, index) => {
      const id = durableJobId(turn, index);
      expect(id).not.toContain(':');
      expect(/^\d+$/.test(id)).toBe(false);
    }));
  });
});
