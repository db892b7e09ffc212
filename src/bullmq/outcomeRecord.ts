import type { SettledJob } from './lockWatch.js';
import type { OutcomeSigner } from './outcomeSigner.js';

/**
 * A job's outcome as its worker records it beside BullMQ's job (`FleetKeys.outcome`), when BullMQ may
 * lose it — the lock lapsed before BullMQ recorded how the job ended (see `LockWatch`): `c` and the
 * JSON of its signed return, or `f` and its failure's signed reason. The letters are the states of the
 * agent's job lookup (`QueueWatcher`), which reads a record before BullMQ's state. Nothing in it is
 * used before it verifies for the job's call, on either side.
 */
export function outcomeRecord(outcome: SettledJob): string {
  return 'returned' in outcome ? `c${JSON.stringify(outcome.returned)}` : `f${outcome.failed}`;
}

/** The outcome a record holds, when it is one signed for `signer`'s job and call; otherwise `undefined`. */
export function readOutcomeRecord(record: string | null, signer: OutcomeSigner): SettledJob | undefined {
  if (record === null) return undefined;
  const text = record.slice(1);
  if (record.startsWith('f')) return signer.readFailure(text) === undefined ? undefined : { failed: text };
  if (!record.startsWith('c')) return undefined;
  let returned: unknown;
  try {
    returned = JSON.parse(text);
  } catch {
    return undefined;
  }
  return signer.verifies(returned) ? { returned } : undefined;
}
