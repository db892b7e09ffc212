import { from, Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, type ToolCall, type ToolResult } from '../src/index.js';
import { mulberry32 } from '../bench/common.js';

// A CI-sized version of bench/load.ts: 50k mixed calls streamed from a lazy source (nothing holds the
// calls up front), every result checked on the fly. No timing assertions.

const N = 50_000;
const CONCURRENCY = 10;

/** Bodies that track how many run at once, to check the pool's bounds under load as well. */
function makeTools() {
  const stats = { running: 0, maxRunning: 0, exclusiveOverlaps: 0, exclusiveRunning: false };
  const enter = (exclusive: boolean) => {
    if (stats.exclusiveRunning || (exclusive && stats.running > 0)) stats.exclusiveOverlaps++;
    stats.running++;
    stats.maxRunning = Math.max(stats.maxRunning, stats.running);
    if (exclusive) stats.exclusiveRunning = true;
  };
  const leave = (exclusive: boolean) => {
    stats.running--;
    if (exclusive) stats.exclusiveRunning = false;
  };
  const input = z.object({ i: z.number() });
  type Body = (i: number, exclusive: boolean) => number | Promise<number>;
  const bodies: Record<string, Body> = {
    sync: (i, x) => (enter(x), leave(x), i),
    async: async (i, x) => (enter(x), leave(x), i),
    chain: async (i, x) => {
      enter(x);
      await null;
      await null;
      await null;
      leave(x);
      return i;
    },
    immediate: (i, x) => {
      enter(x);
      return new Promise((resolve) => setImmediate(() => (leave(x), resolve(i))));
    },
  };
  const tools = (['parallel', 'exclusive'] as const).flatMap((mode) =>
    Object.entries(bodies).map(([kind, body]) =>
      defineTool({
        name: `${mode}_${kind}`,
        description: `${mode} ${kind}`,
        input,
        mode,
        execute: ({ i }) => body(i, mode === 'exclusive'),
      }),
    ),
  );
  return { tools, stats, kinds: Object.keys(bodies) };
}

const idOf = (i: number) => `toolu_${i.toString(36).padStart(24, '0')}`;

/**
 * A model-like stream: chunks of 1–32 calls made on demand, a macrotask between chunks, and (when
 * `inFlight` is given) no more than `lead` calls ahead of the results.
 */
async function* modelStream(kinds: readonly string[], inFlight?: () => number, lead = 256): AsyncGenerator<ToolCall> {
  const random = mulberry32(1);
  let i = 0;
  while (i < N) {
    const end = Math.min(N, i + 1 + Math.floor(random() * 32));
    for (; i < end; i++) {
      const mode = random() < 0.2 ? 'exclusive' : 'parallel';
      const kind = kinds[Math.floor(random() * kinds.length)]!;
      yield { id: idOf(i), name: `${mode}_${kind}`, args: `{"i":${i}}` };
    }
    await new Promise((resolve) => setImmediate(resolve));
    while (inFlight !== undefined && inFlight() > lead) await new Promise((resolve) => setImmediate(resolve));
  }
}

/** The first result that is not the expected one, or undefined. */
function wrong(result: ToolResult, expected: number): string | undefined {
  if (result.index === expected && result.id === idOf(expected) && result.status === 'ok' && result.value === expected) return undefined;
  return `#${expected}: index ${result.index}, id ${result.id}, status ${result.status}`;
}

describe('load', () => {
  it(`${N / 1000}k mixed calls streamed through operator(): every result once, in order, ok`, async () => {
    const { tools, stats, kinds } = makeTools();
    const pipeline = createPipeline({ tools, concurrency: CONCURRENCY });
    let emitted = 0;
    let received = 0;
    let firstWrong: string | undefined;
    const source = from(modelStream(kinds, () => emitted - received));
    const counted = new Observable<ToolCall>((subscriber) =>
      source.subscribe({
        next: (call) => (emitted++, subscriber.next(call)),
        error: (error: unknown) => subscriber.error(error),
        complete: () => subscriber.complete(),
      }),
    );
    await new Promise<void>((resolve, reject) => {
      counted.pipe(pipeline.operator()).subscribe({
        next: (result) => {
          firstWrong ??= wrong(result, received);
          received++;
        },
        error: reject,
        complete: resolve,
      });
    });
    expect(firstWrong).toBeUndefined();
    expect(emitted).toBe(N);
    expect(received).toBe(N);
    expect(stats.maxRunning).toBeLessThanOrEqual(CONCURRENCY);
    expect(stats.exclusiveOverlaps).toBe(0);
    expect(stats.running).toBe(0);
  });

  it(`${N / 1000}k mixed calls from an unpaced async iterable through run(): every result, in order, ok`, async () => {
    const { tools, stats, kinds } = makeTools();
    const results = await createPipeline({ tools, concurrency: CONCURRENCY }).run(modelStream(kinds));
    expect(results).toHaveLength(N);
    expect(results.map(wrong).find((w) => w !== undefined)).toBeUndefined();
    expect(stats.maxRunning).toBeLessThanOrEqual(CONCURRENCY);
    expect(stats.exclusiveOverlaps).toBe(0);
  });
});
