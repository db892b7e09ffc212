import { z } from 'zod';
import { toolContract } from '../../../src/index.js';

/** The contracts of the fleet tests, shared by the agent (the test) and the worker processes. */
export const echo = toolContract({ name: 'echo', description: 'Echo a text', input: z.object({ text: z.string() }), mode: 'parallel' });

/** Sleeps `ms` honouring its signal; the worker logs start, end and the moment it saw its signal abort. */
export const sleep = toolContract({ name: 'sleep', description: 'Sleep', input: z.object({ ms: z.int().nonnegative() }), mode: 'parallel' });

/** Like sleep, but idempotent: a worker's death runs it again elsewhere. */
export const sleepIdempotent = toolContract({ name: 'sleep_idempotent', description: 'Sleep', input: z.object({ ms: z.int().nonnegative() }), mode: 'parallel', idempotent: true });

/** Like sleep, but a barrier. */
export const barrier = toolContract({ name: 'barrier', description: 'Sleep alone', input: z.object({ ms: z.int().nonnegative() }), mode: 'exclusive' });

/** Sleeps `ms` and ignores its signal; its time limit is 600 ms (its trip through the queue counts). */
export const stubborn = toolContract({ name: 'stubborn', description: 'Sleep, deaf', input: z.object({ ms: z.int().nonnegative() }), mode: 'parallel', timeoutMs: 600 });

/** The agent's schema takes any number; the workers' (`strictOnWorker`) only up to 10. */
export const strict = toolContract({ name: 'strict', description: 'A number', input: z.object({ n: z.number() }), mode: 'parallel' });
export const strictOnWorker = toolContract({ name: 'strict', description: 'A number', input: z.object({ n: z.number().max(10) }), mode: 'parallel' });

/** Streams `count` items `gapMs` apart (failing after `failAt` items when given); logs each item's time. */
export const items = toolContract({
  name: 'items',
  description: 'Stream numbers',
  input: z.object({ count: z.int().nonnegative(), gapMs: z.int().nonnegative(), failAt: z.int().optional() }),
  mode: 'parallel',
});

/** Throws with the given message. */
export const fails = toolContract({ name: 'fails', description: 'Throw', input: z.object({ message: z.string() }), mode: 'parallel' });

/** Known to the agent only: no worker has it. */
export const nowhere = toolContract({ name: 'nowhere', description: 'No worker runs it', input: z.object({}), mode: 'parallel' });

/** Sleeps `ms` honouring its signal, then throws when `fail` (the property tests' remote bodies). */
export const step = toolContract({ name: 'step', description: 'Work a while', input: z.object({ ms: z.int().nonnegative(), fail: z.boolean() }), mode: 'parallel' });

/** Like step, but a barrier (its failure cancels the rest of its turn unless onError says otherwise). */
export const stepAlone = toolContract({ name: 'step_alone', description: 'Work a while, alone', input: z.object({ ms: z.int().nonnegative(), fail: z.boolean() }), mode: 'exclusive' });

/** Like step, but idempotent (run again when its worker dies). */
export const stepIdempotent = toolContract({
  name: 'step_idempotent',
  description: 'Work a while; safe to repeat',
  input: z.object({ ms: z.int().nonnegative(), fail: z.boolean() }),
  mode: 'parallel',
  idempotent: true,
});

/** Reports `steps` progress values `gapMs` apart (then throws when `fail`): progress over the fleet. */
export const progressing = toolContract({
  name: 'progressing',
  description: 'Report progress',
  input: z.object({ steps: z.int().nonnegative(), gapMs: z.int().nonnegative(), fail: z.boolean().optional() }),
  mode: 'parallel',
});

/** Idempotent and retried: its first attempt per idempotency key fails (on any worker), the next returns the key. */
export const keyed = toolContract({
  name: 'keyed',
  description: 'Fail once per key, then return it',
  input: z.object({}),
  mode: 'parallel',
  idempotent: true,
  retry: { attempts: 2, backoff: { initialMs: 10 } },
});

/** Like `keyed`, but the attempts after the first sleep `ms` before they answer (to crash an agent during one). */
export const keyedSlow = toolContract({
  name: 'keyed_slow',
  description: 'Fail once per key, then sleep and return it',
  input: z.object({ ms: z.int().nonnegative() }),
  mode: 'parallel',
  idempotent: true,
  retry: { attempts: 2, backoff: { initialMs: 10 } },
});
