import { Later, type MaybeLater } from '../../util/later.js';
import type { BodyRun } from '../pool/bodyRun.js';
import type { BodySink } from '../pool/invokeBody.js';
import type { CallRecord } from '../records/callRecord.js';
import { Settled, type OutputFeed } from './executeAnswer.js';

/**
 * One output being collected in an execute chain (the body's, or a middleware's stream): it settles
 * once, at once when it can (a `Later` only while it is pending), and tells `feed` each item it keeps
 * as it comes (the items `next()`'s Observable emits).
 */
export class Collector implements BodySink {
  /** How the output settled, once it has. */
  settled: Settled | undefined = undefined;
  private later: Later<Settled> | undefined = undefined;
  partial: readonly unknown[] | undefined = undefined;

  constructor(
    readonly run: BodyRun,
    private readonly feed: OutputFeed | undefined,
  ) {}

  keep(run: BodyRun, kept: readonly unknown[]): void {
    if (run === this.run) this.feed?.push(kept);
  }

  resolveBody(_record: CallRecord, run: BodyRun, value: unknown, streamed: boolean): void {
    if (run !== this.run) return;
    // A stream its abort cut short (an async iterable ends quietly): not the whole output.
    if (streamed && run.aborted) this.settle(new Settled(false, run.signal.reason));
    else this.settle(new Settled(true, value, streamed));
  }

  rejectBody(_record: CallRecord, run: BodyRun, error: unknown, partial: readonly unknown[] | undefined): void {
    if (run !== this.run || this.settled !== undefined) return;
    this.partial = partial;
    this.settle(new Settled(false, error));
  }

  outcome(): MaybeLater<Settled> {
    return this.settled ?? (this.later ??= new Later<Settled>());
  }

  private settle(settled: Settled): void {
    if (this.settled !== undefined) return;
    this.settled = settled;
    this.later?.resolve(settled);
  }
}
