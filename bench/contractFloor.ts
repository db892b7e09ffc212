/**
 * The contract floor (issue 15): the hand pool plus only the per-call work the `ToolResult` contract
 * itself asks for, with none of the pipeline's machinery (no RxJS, no pool queue, barriers, reorder,
 * timeouts, cancellation, events). What is left is what no implementation of the contract can skip:
 * - **clock**: five `performance.now()` reads, for `timing` (received, admitted, started, ended,
 *   finished) — the durations are differences of these;
 * - **freeze**: the result, its `timing` and `timing.durations` frozen (three `Object.freeze`);
 * - **ids**: the duplicate-id window (`RecentIds`, the pipeline's own, so the floor follows its
 *   structure: since issue 25 two generations of 10,000 ids, at least the last 10,000 refused);
 * - **snapshot**: the arguments copied as JSON data and deep-frozen before validation, and the
 *   schema's output deep-frozen (`snapshotArgs`, `deepFreeze`, the pipeline's own);
 * and the 19-field result itself, with the content rendered as the pipeline renders it and the same
 * shared empty `rewrittenBy`/`trace`/`meta` the plain path uses. Each part can be left out, to print
 * what it costs on its own: the floor's ratio to the hand pool bounds what the pipeline can reach.
 *
 * @example
 * ```ts
 * const floor = contractFloor(input, 10, ALL_PARTS);
 * const results = await floor(calls, async ({ i }) => i);
 * ```
 */
import type { z } from 'zod';
import type { ToolCall } from '../src/index.js';
import { RecentIds } from '../src/util/recentIds.js';
import { argsOf } from './common.js';
import { renderValue } from '../src/util/renderContent.js';
import { deepFreeze, snapshotArgs } from '../src/util/snapshot.js';

export type FloorPart = 'clock' | 'freeze' | 'ids' | 'snapshot';
export const ALL_PARTS: readonly FloorPart[] = ['clock', 'freeze', 'ids', 'snapshot'];

const NONE: readonly never[] = Object.freeze([]);
const NO_META: Readonly<Record<string, unknown>> = Object.freeze({});
const same = <T>(value: T): T => value;
const noClock = (): number => 0;
const clock = (): number => performance.now();

/** What the bench's result check reads of a floor result (the rest of the 19 fields are there too). */
export interface FloorResult {
  readonly id: string;
  readonly index: number;
  readonly status: string;
  readonly value: unknown;
}

/** A pool of `concurrency` workers that does the contract's per-call work (the `parts` kept) and nothing more. */
export function contractFloor<Args>(
  input: z.ZodType<Args>,
  concurrency: number,
  parts: readonly FloorPart[],
): (calls: readonly ToolCall[], body: (args: Args) => unknown) => Promise<FloorResult[]> {
  const now = parts.includes('clock') ? clock : noClock;
  const freeze = parts.includes('freeze') ? Object.freeze : same;
  const checkIds = parts.includes('ids');
  const snapshot = parts.includes('snapshot') ? snapshotArgs : argsOf;
  const frozen = parts.includes('snapshot') ? deepFreeze : same;
  return async (calls, body) => {
    const out = new Array<FloorResult>(calls.length);
    const seen = new RecentIds(10_000);
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < calls.length) {
        const index = next++;
        const { id, name, args: raw } = calls[index]!;
        const receivedAt = now();
        if (checkIds && !seen.add(id)) throw new Error(`duplicate id ${id}`);
        const args = frozen(input.parse(snapshot(raw)));
        const admittedAt = now();
        const startedAt = now();
        const value = await body(args);
        const endedAt = now();
        const content = renderValue(value, false);
        const finishedAt = now();
        const durations = freeze({
          intake: admittedAt - receivedAt,
          policy: 0,
          queue: startedAt - admittedAt,
          limit: 0,
          execute: endedAt - startedAt,
          post: 0,
          total: finishedAt - receivedAt,
        });
        const timing = freeze({ receivedAt, startedAt, endedAt, finishedAt, durations });
        out[index] = freeze({
          id, name, index, turn: undefined, status: 'ok', content, value, streamed: false,
          args, originalArgs: args, rewrittenBy: NONE, decision: 'allow', trace: NONE, meta: NO_META, omitted: undefined,
          started: true, attempts: 1, timing,
        });
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    return out;
  };
}
