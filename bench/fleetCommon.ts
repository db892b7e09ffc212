/**
 * What the fleet benches share (`fleet.ts`: toolstream beside plain BullMQ; `fleetCluster.ts`: a single
 * Redis beside a Redis Cluster): the worker processes they fork of themselves and tell which queue to
 * serve, the no-op calls they send through a pipeline, and a percentile.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import { from as fromArray } from 'rxjs';
import type { Pipeline } from '../src/index.js';

/** The `p`th percentile of `values` (nearest rank). */
export const percentile = (values: readonly number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;
};

/**
 * The worker processes of one side of a bench: the running script forked with `args` (it runs
 * {@link serveQueues} when it sees them); each round tells them its queue.
 */
export class Workers {
  readonly #children: ChildProcess[] = [];

  static start(count: number, args: readonly string[]): Workers {
    const workers = new Workers();
    for (let i = 0; i < count; i++) workers.#children.push(fork(process.argv[1]!, [...args], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
    return workers;
  }

  /** Has every worker serve `queue` (and stop serving the one before). */
  async serve(queue: string): Promise<void> {
    await Promise.all(this.#children.map(async (child) => {
      // The listener the race did not need is removed (aborted): one round after another would pile them up.
      const settled = new AbortController();
      const answered = once(child, 'message', { signal: settled.signal }) as Promise<[string]>;
      const died = once(child, 'exit', { signal: settled.signal }).then(([code, signal]) => [`its exit (${String(signal ?? code)})`] as [string]);
      answered.catch(() => undefined);
      died.catch(() => undefined);
      child.send({ serve: queue });
      try {
        const [message] = await Promise.race([answered, died]);
        if (message !== 'serving') throw new Error(`a worker answered ${message}`);
      } finally {
        settled.abort();
      }
    }));
  }

  async stop(): Promise<void> {
    await Promise.all(this.#children.map(async (child) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      if (child.connected) child.send({ exit: true });
      const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(killer);
    }));
  }
}

/**
 * In a worker process of {@link Workers}: serves the queue each message names with `serve` (stopping
 * the one before), until told to exit — then `beforeExit` — or the producer is gone.
 */
export function serveQueues(serve: (queue: string) => Promise<() => Promise<void>>, beforeExit: () => void = () => undefined): void {
  let stop: (() => Promise<void>) | undefined;
  process.on('disconnect', () => process.exit(1));
  process.on('message', (message: { serve?: string; exit?: boolean }) => {
    void (async () => {
      await stop?.();
      stop = undefined;
      if (message.exit === true) {
        beforeExit();
        process.exit(0);
      }
      stop = await serve(message.serve!);
      process.send!('serving');
    })().catch((error: unknown) => {
      process.send!(String(error));
      process.exit(1);
    });
  });
}

/**
 * Sends `jobs` no-op calls (`{ id: 'c<x>', name: 'noop', args: { x } }`) through `pipeline.operator()`,
 * all at once or each once the previous result is in, and checks each result is its `x`; how long it
 * took, and each call's latency from entering the pipeline to its result coming out (in model order, as
 * a user gets them).
 */
export async function noopCalls(pipeline: Pipeline, jobs: number, shape: 'all' | 'serial'): Promise<{ readonly elapsedMs: number; readonly latencies: readonly number[] }> {
  const latencies: number[] = [];
  const batch = async (from: number, count: number) => {
    const sent = performance.now();
    const calls = Array.from({ length: count }, (_, i) => ({ id: `c${from + i}`, name: 'noop', args: { x: from + i } }));
    await new Promise<void>((resolve, reject) =>
      fromArray(calls).pipe(pipeline.operator()).subscribe({
        next: (result) => {
          if (result.status !== 'ok' || result.value !== Number(result.id.slice(1))) reject(new Error(`call ${result.id}: ${result.content}`));
          latencies.push(performance.now() - sent);
        },
        error: reject,
        complete: resolve,
      }),
    );
  };
  const started = performance.now();
  if (shape === 'all') await batch(0, jobs);
  else for (let x = 0; x < jobs; x++) await batch(x, 1);
  return { elapsedMs: performance.now() - started, latencies };
}
