import type { CallRecord } from '../records/callRecord.js';
import { quote } from '../../util/describe.js';

/**
 * The places suspended calls hold in a pool (durable turns; the pool's rule 9). A suspended call stays
 * unfinished for the calls behind it, a barrier as its mode says: every later exclusive call must wait
 * behind the first suspended call, and every later call behind a suspended exclusive one. A call that
 * may not overtake one is suspended too (`behind_suspended`) and holds its own place in turn.
 *
 * @example
 * ```ts
 * const places = new SuspendedPlaces();
 * places.hold(suspended); // a call the guard suspended, or a program stopped on suspended approvals
 * if (places.stopped(record)) emit(record); // suspended behind it, never started
 * ```
 */
export class SuspendedPlaces {
  /** The first suspended call: later exclusive calls wait behind it. */
  private exclusiveWaits: CallRecord | undefined = undefined;
  /** The first suspended exclusive call: every later call waits behind it. */
  private everyoneWaits: CallRecord | undefined = undefined;

  /** A suspended call holds its place. */
  hold(record: CallRecord): void {
    this.exclusiveWaits ??= record;
    if (record.tool?.mode === 'exclusive') this.everyoneWaits ??= record;
  }

  /**
   * Whether an admitted call may not start because a suspended call ahead of it is a barrier to it: if
   * so, it is suspended (`behind_suspended`) and holds its place too.
   */
  stopped(record: CallRecord): boolean {
    const by = this.everyoneWaits ?? (record.tool!.mode === 'exclusive' ? this.exclusiveWaits : undefined);
    if (by === undefined) return false;
    record.fail('suspended', {
      code: 'behind_suspended',
      message: `Suspended: this call may not start before call ${quote(by.id)} (${by.name}), which is suspended, has finished.`,
      byCallId: by.id,
    });
    this.hold(record);
    return true;
  }
}
