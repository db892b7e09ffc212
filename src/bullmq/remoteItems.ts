import type { Redis } from 'ioredis';
import type { JobWatch } from './jobWatch.js';

/** How many items one read takes. */
const PAGE = 500;

/**
 * The items a worker's body streamed, in the agent, as they come: read from the job's Redis stream
 * after the last id seen (so nothing is duplicated however often it is woken), woken by the workers'
 * notices and by the job's end, after which one last read takes whatever the notices missed (so
 * nothing is lost). When `signal` aborts it waits for the job to end before it returns: the call's pool
 * slot is held until the job settled (or the pipeline's grace passed).
 *
 * @returns the job's outcome once every item is read; `read` throws nothing but Redis errors.
 */
export async function* readItems(commands: Redis, key: string, watch: JobWatch, signal: AbortSignal): AsyncGenerator<unknown, void, undefined> {
  let last: string | undefined;
  for (;;) {
    const ended = watch.outcome !== undefined;
    const change = watch.nextChange();
    const entries = await commands.xrange(key, last === undefined ? '-' : `(${last}`, '+', 'COUNT', PAGE);
    for (const [id, fields] of entries) {
      last = id;
      yield JSON.parse(fields[1]!) as unknown;
    }
    if (entries.length === PAGE) continue;
    if (ended) return;
    if (signal.aborted) {
      await watch.settled;
      return;
    }
    await new Promise<void>((resolve) => {
      const onAbort = () => resolve();
      signal.addEventListener('abort', onAbort, { once: true });
      void change.then(() => (signal.removeEventListener('abort', onAbort), resolve()));
    });
  }
}
