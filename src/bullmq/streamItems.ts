import { from, type ObservableInput } from 'rxjs';

/**
 * Hands each item of a streamed body's output to `write` as it comes, in order, with up to `window`
 * writes unanswered at once (a slow store slows the body down), and resolves with the number of items
 * once every write has landed. Internal to the worker: `write` is its Redis `XADD` + notice.
 *
 * Whatever ends the stream, it settles only after every write started has settled: a body that fails
 * midway fails after the items it yielded are stored (the agent reads them as the call's partial
 * output when the job fails), and a write that fails while earlier ones are still pending is never
 * left as an unhandled rejection (which would crash the worker's process): the stream fails with the
 * first failure, the body's or a write's.
 *
 * An Observable output is unsubscribed when `signal` aborts, and the stream fails with the signal's
 * reason (an Observable that does not end by itself would otherwise hold the worker's slot for good);
 * an async iterable is left to its body, which sees the same signal.
 *
 * @example
 * ```ts
 * const count = await streamItems(output, (item) => redis.xadd(key, '*', 'v', JSON.stringify(item)), 64, signal);
 * ```
 */
export async function streamItems(
  output: AsyncIterable<unknown> | ObservableInput<unknown>,
  write: (item: unknown) => Promise<unknown>,
  window: number,
  signal: AbortSignal,
): Promise<number> {
  let count = 0;
  const inFlight: Promise<unknown>[] = [];
  const add = async (item: unknown): Promise<void> => {
    count++;
    const written = write(item);
    written.catch(() => undefined); // handled here: awaited below, in order, or settled at the end
    inFlight.push(written);
    if (inFlight.length >= window) await inFlight.shift();
  };
  try {
    if (typeof (output as Partial<AsyncIterable<unknown>>)[Symbol.asyncIterator] === 'function') {
      for await (const item of output as AsyncIterable<unknown>) await add(item);
    } else {
      await new Promise<void>((resolve, reject) => {
        let written = Promise.resolve();
        // Called only from a settled write or the abort listener, both after `subscribe` returned.
        const fail = (error: unknown) => {
          subscription.unsubscribe(); // a write failed, or the call was aborted: nothing more is taken
          const failNow = () => reject(error);
          void written.then(failNow, failNow); // once the items taken so far are handed to `write`
        };
        const subscription = from(output as ObservableInput<unknown>).subscribe({
          next: (item) => {
            written = written.then(() => add(item));
            written.catch(fail);
          },
          error: (error: unknown) => void written.then(() => reject(error), reject),
          complete: () => void written.then(resolve, reject),
        });
        // Aborted (cancelled, timed out): an Observable does not end by itself, so the stream fails now.
        const aborted = () => fail(signal.reason);
        if (signal.aborted) aborted();
        else signal.addEventListener('abort', aborted, { once: true });
      });
    }
  } catch (error) {
    await Promise.allSettled(inFlight); // the items yielded before the failure are stored before it is told
    throw error;
  }
  await Promise.all(inFlight); // every item is stored before the job completes
  return count;
}
