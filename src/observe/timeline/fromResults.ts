import type { ToolResult } from '../../types/toolResult.js';
import { callIdentity, type TimelineCall, type TimelineSpan, type TimelineWait } from './model.js';

/**
 * The timeline's model of each result. `exclusive` names the tools that are barriers. The commit time
 * is the reorder release: a result is given out once it and every result before it in model order were
 * built, so it is the latest `finishedAt` among indices up to its own. That holds for the results of one
 * subscription; when indices repeat (several runs put together), each result's own `finishedAt` is used.
 */
export function callsFromResults(results: readonly ToolResult[], exclusive: ReadonlySet<string>): TimelineCall[] {
  const indices = new Set(results.map((r) => r.index));
  const byIndex = [...results].sort((a, b) => a.index - b.index);
  const released = new Map<ToolResult, number>();
  let latest = -Infinity;
  for (const result of byIndex) {
    latest = Math.max(latest, result.timing.finishedAt);
    released.set(result, latest);
  }
  const oneRun = indices.size === results.length;
  return results.map((result) => {
    const { timing } = result;
    const { durations } = timing;
    const waits: TimelineWait[] = [];
    if (durations.policy > 0) {
      const from = timing.receivedAt + durations.intake;
      waits.push({ kind: result.decision === 'ask' ? 'approval' : 'policy', from, to: from + durations.policy });
    }
    const attempts: TimelineSpan[] = [];
    if (timing.startedAt !== undefined) {
      // The limit's part of the queue is drawn last, just before the start (results give its length only).
      const limitFrom = timing.startedAt - durations.limit;
      if (durations.queue > durations.limit) waits.push({ kind: 'queue', from: timing.startedAt - durations.queue, to: limitFrom });
      if (durations.limit > 0) waits.push({ kind: 'limit', from: limitFrom, to: timing.startedAt });
      attempts.push({ from: timing.startedAt, to: timing.endedAt ?? timing.startedAt });
    }
    return {
      ...callIdentity(result, exclusive),
      receivedAt: timing.receivedAt,
      waits,
      attempts,
      finishedAt: timing.finishedAt,
      committedAt: oneRun ? released.get(result)! : timing.finishedAt,
    };
  });
}
