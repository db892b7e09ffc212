import fc from 'fast-check';
import type { TimelineCall, TimelineStatus, TimelineWaitKind } from '../../src/observe/timeline/model.js';

// Schedules for the timeline's layout tests, in its own model (what results and events are turned into).

/** A call as the models give one: waits in sequence from its arrival, then attempts (or none), then its result. */
export function call(id: string, name: string, at: { received: number; waits?: [TimelineWaitKind, number][]; attempts?: [number, number][]; status?: TimelineStatus; code?: string; commitAfter?: number; exclusive?: boolean; index?: number }): TimelineCall {
  let t = at.received;
  const waits = (at.waits ?? []).map(([kind, ms]) => ({ kind, from: t, to: (t += ms) }));
  const attempts = (at.attempts ?? []).map(([gap, ms]) => ({ from: (t += gap), to: (t += ms) }));
  const finishedAt = t + 0.5;
  return {
    id,
    name,
    index: at.index ?? 0,
    status: at.status ?? 'ok',
    code: at.code,
    exclusive: at.exclusive ?? false,
    receivedAt: at.received,
    waits,
    attempts,
    attemptCount: Math.max(attempts.length, 0),
    finishedAt,
    committedAt: finishedAt + (at.commitAfter ?? 0),
  };
}

const anyText = fc.oneof(fc.string({ minLength: 1, maxLength: 30 }), fc.string({ unit: 'binary', minLength: 1, maxLength: 12 }), fc.constantFrom('七七七七', '😀😀', 'read_file', 'toolu_demo_04'));
export const anyCall = fc
  .record({
    name: anyText,
    received: fc.double({ min: 0, max: 5000, noNaN: true }),
    waits: fc.array(fc.tuple(fc.constantFrom<TimelineWaitKind>('policy', 'approval', 'queue', 'limit'), fc.double({ min: 0, max: 3000, noNaN: true })), { maxLength: 3 }),
    attempts: fc.array(fc.tuple(fc.double({ min: 0, max: 500, noNaN: true }), fc.double({ min: 0, max: 4000, noNaN: true })), { maxLength: 3 }),
    status: fc.constantFrom<TimelineStatus>('ok', 'error', 'denied', 'cancelled', 'timeout', 'suspended'),
    commitAfter: fc.double({ min: 0, max: 2000, noNaN: true }),
    exclusive: fc.boolean(),
  });

