import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { refusal, signPayload, type UnsignedPayload } from '../../src/bullmq/jobPayload.js';
import { watchJob } from '../../src/bullmq/jobObserve.js';
import type { JobEnd, ObservedJob } from '../../src/bullmq/index.js';
import { asTraceCarrier } from '../../src/util/traceCarrier.js';
import { capturingWarnings } from '../support/warnings.js';

const secret = Buffer.from('the trace context tests sign with this secret');
const place = { jobId: 'ts-1', prefix: 'toolstream', queue: 'q' };
const unsigned: UnsignedPayload = { v: 2, tool: 't', args: { a: 1 }, callId: 'c', turn: null, index: 0, key: 'tsk-k', attempt: 1, deadline: null, expiresAt: 1_900_000_000_000, keepMs: 1000 };
const tc = { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', tracestate: 'vendor=1' };
const roundTrip = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

describe("a job's trace context", () => {
  it('is signed with the job: it verifies after the JSON round trip, and changing, adding or removing it breaks the signature', () => {
    const traced = roundTrip(signPayload(secret, { ...unsigned, tc }, place));
    expect(refusal(secret, traced, place)).toBeUndefined();
    expect(refusal(secret, { ...traced, tc: { ...tc, traceparent: '00-00000000000000000000000000000001-0000000000000001-01' } }, place)).toMatch(/signature/);
    const { tc: _dropped, ...stripped } = traced;
    expect(refusal(secret, stripped, place)).toMatch(/signature/);
    const plain = roundTrip(signPayload(secret, unsigned, place));
    expect(refusal(secret, plain, place)).toBeUndefined();
    expect(refusal(secret, { ...plain, tc }, place)).toMatch(/signature/);
  });

  it('a payload without one signs the same text as before the field existed (workers of the version before verify untraced jobs)', () => {
    // The MAC before `tc`: the fields in this order, as jobPayload.ts signed them at f075d86.
    const { v, tool, args, callId, turn, index, key, attempt, deadline, expiresAt, keepMs } = unsigned;
    const before = createHmac('sha256', secret)
      .update(JSON.stringify(['toolstream.job', v, tool, args, callId, turn, index, key, attempt, deadline, expiresAt, keepMs, place.jobId, place.prefix, place.queue]))
      .digest('base64url');
    expect(signPayload(secret, unsigned, place).sig).toBe(before);
  });

  it('is taken from outside only as an object of a few string fields', () => {
    expect(asTraceCarrier(tc)).toEqual(tc);
    for (const junk of [undefined, null, 'traceparent', [tc], {}, { traceparent: 1 }, { traceparent: 'x'.repeat(9000) }, Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`k${i}`, 'v']))]) {
      expect(asTraceCarrier(junk)).toBeUndefined();
    }
  });
});

describe('a job observer that throws', () => {
  const job: ObservedJob = { jobId: 'j', queue: 'q', tool: 't', callId: 'c', index: 0, turn: undefined, attempt: 1, traceContext: undefined };
  it('never keeps the body from running, nor runs it twice; the body\'s own error and value stand', async () => {
    const { warnings } = await capturingWarnings(async () => {
      let runs = 0;
      const body = () => ++runs;
      expect(watchJob(() => { throw new Error('asked'); }, job)).toBeUndefined();
      const before = watchJob(() => ({ run: () => { throw new Error('before'); }, end: () => undefined }), job)!;
      expect(before.run(body)).toBe(1);
      const after = watchJob(() => ({ run: (inner) => { inner(); throw new Error('after'); }, end: () => { throw new Error('end'); } }), job)!;
      expect(after.run(body)).toBe(2);
      after.end({ ok: true } satisfies JobEnd);
      const skipping = watchJob(() => ({ run: () => 0 as never, end: () => undefined }), job)!;
      expect(skipping.run(body)).toBe(3);
      const swallowing = watchJob(() => ({ run: (inner) => { try { return inner(); } catch { return 0 as never; } }, end: () => undefined }), job)!;
      expect(() => swallowing.run(() => { throw new Error('the body failed'); })).toThrow('the body failed');
      expect(runs).toBe(3);
    });
    expect(warnings.map((warning) => warning.message)).toEqual([
      'the job observer failed observing job j (t): asked',
      'the job observer failed running job j (t): before',
      'the job observer failed running job j (t): after',
      'the job observer failed ending job j (t): end',
      'the job observer failed running job j (t): its run() did not call the body',
    ]);
    expect(new Set(warnings.map((warning) => warning.name))).toEqual(new Set(['ToolstreamObserverWarning']));
  });
});
