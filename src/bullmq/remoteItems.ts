import type { RedisClient } from './fleetRedis.js';
import type { JobWatch } from './jobWatch.js';
import type { OutcomeSigner } from './outcomeSigner.js';
import { unverified } from './remoteOutcome.js';

/** How many items one read takes. */
const PAGE = 500;

/**
 * The items a worker's body streamed, in the agent, as they come: read from the job's Redis stream
 * after the last id seen (so nothing is duplicated however often it is woken), woken by the workers'
 * notices and by the job's end, after which one last read takes whatever the notices missed (so
 * nothing is lost). When `signal` aborts it waits for the job to end before it returns: the call's pool
 * slot is held until the job settled (or the pipeline's grace passed).
 *
 * Each entry must be signed for the job as the next in sequence (`seq` counts from 0): the first that
 * is not — forged, out of order, duplicated, a second run's — throws `result_unverified`, so the
 * verified items before it are the call's partial output. `read.count` is how many were yielded, for
 * the caller to hold against the job's signed item count.
 *
 * @returns once the job ended and every item is read; throws `result_unverified` and Redis errors.
 */
export async function* readItems(commands: RedisClient, key: string, watch: JobWatch, signer: OutcomeSigner, signal: AbortSignal, read: { count: number }): AsyncGenerator<unknown, void, undefined> {
  let last: string | undefined;
  for (;;) {
    const ended = watch.outcome !== undefined;
    const change = watch.nextChange();
    const entries = await commands.xrange(key, last === undefined ? '-' : `(${last}`, '+', 'COUNT', PAGE);
    for (const [id, fields] of entries) {
      last = id;
      const [, text, , mac] = fields;
      if (text === undefined || !signer.verifiesEntry('item', read.count, text, mac)) {
        throw unverified(watch.id, `its streamed item ${read.count} is not signed for it as the next in sequence`);
      }
      read.count++;
      yield JSON.parse(text) as unknown;
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
