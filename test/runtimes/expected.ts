// What every runtime's cases must print (cases.ts), one entry per case, in order. Written out, not taken
// from a run: the suite's own Node is checked against it like every other runtime. The hashes pin bytes,
// not just behaviour: an argument hash in an approval token and an idempotency key are SHA-256s that must
// come out the same in every runtime and every version, or a token made in one would be refused in another.
import type { CASES } from './cases.js';

const NOTES = '# notes\nfirst\nsecond';

export const EXPECTED: Readonly<Record<(typeof CASES)[number], unknown>> = {
  'quick-start': [
    ['call_1', 'ok', 21],
    ['call_2', 'error', 'invalid_args'],
  ],
  approver: {
    results: [
      ['r', 'ok', NOTES],
      ['w', 'denied', 'approval_rejected'],
    ],
    asked: ['read_file {"path":"notes.md"} ("read_file" matches *)', 'write_file {"path":"notes.md"} ("write_file" matches *)'],
  },
  'cancel-rest': {
    results: [
      ['s1', 'ok', 'done'],
      ['s2', 'error', 'tool_error'],
      ['s3', 'cancelled', 'cancelled'],
    ],
    ran: ['s1', 's2'],
    cancels: [['s3', 'sibling_failed', 's2']],
  },
  'throwing-observer': {
    byDefault: [
      ['o1', 'ok', '{"name":"toolstream"}'],
      ['o2', 'error', 'tool_error'],
    ],
    own: [
      ['o1', 'ok', '{"name":"toolstream"}'],
      ['o2', 'error', 'tool_error'],
    ],
    reported: ['o1: observer broke', 'o2: observer broke'],
  },
  events: {
    byCall: {
      e1: ['received', 'decided', 'started', 'finished', 'result'],
      e2: ['received', 'decided', 'approval-requested', 'approval-answered', 'started', 'finished', 'result'],
      e3: ['received', 'finished', 'result'],
    },
    results: ['e1', 'e2', 'e3'],
  },
  durable: {
    first: [
      ['d1', 'ok', NOTES],
      ['d2', 'suspended', 'approval_pending'],
      ['d3', 'suspended', 'approval_pending'],
    ],
    tokens: [
      { callId: 'd2', tool: 'write_file', reasons: ['"write_file" matches write_file'], signed: true, argsHash: 'xBdO8eLzWO9crHUeK2yXCsiebzNBoeU6YqwheKmXVNE', signedFor: 'd2' },
      { callId: 'd3', tool: 'write_file', reasons: ['"write_file" matches write_file'], signed: true, argsHash: 'hawsf0teptJvii6kd8DDbCK2yw6nCAFoXw2KGHciEkI', signedFor: 'd3' },
    ],
    resumed: [
      ['d1', 'ok', NOTES],
      ['d2', 'ok', 'wrote a.md'],
      ['d3', 'denied', 'approval_rejected'],
    ],
    writes: ['a.md'],
    keys: { d2: 'tsk-gXEDVvXSx4A_arUW8WsW0B50y7rN1I5jmPajpN0gD68' },
    again: [
      ['d1', 'ok', NOTES],
      ['d2', 'ok', 'wrote a.md'],
      ['d3', 'denied', 'approval_rejected'],
    ],
  },
  'ai-sdk-stream': [
    ['a1', 'ok', NOTES],
    ['a2', 'error', 'unknown_tool'],
    ['a3', 'error', 'incomplete_args'],
  ],
};
