import type { PipelineEvent } from '../../types/events.js';
import { callIdentity, type TimelineCall, type TimelineSpan, type TimelineWait } from './model.js';

/**
 * The timeline's model of each call, from the lifecycle events of one run (`pipeline.events()`), which
 * say more than results: the approval wait is its own span (`approval-requested` → `approval-answered`),
 * the queue for a slot runs from the decision (or the answer) to `started`, each `retry` ends an attempt
 * and the next one begins after its delay, and the model-order commit is the `result` event itself.
 * A call whose `result` event is not among them (a stream cut short) is left out. Calls are told apart
 * by index and id, so the events of several runs (the turns of a conversation) can be drawn together.
 */
export function callsFromEvents(events: readonly PipelineEvent[], exclusive: ReadonlySet<string>): TimelineCall[] {
  // A call is its index and id together: the events of several runs put together (two turns) repeat indices.
  const byCall = new Map<string, PipelineEvent[]>();
  for (const event of events) {
    const key = `${event.index}\u0000${event.id}`;
    const list = byCall.get(key);
    if (list === undefined) byCall.set(key, [event]);
    else list.push(event);
  }
  const calls: TimelineCall[] = [];
  for (const list of byCall.values()) {
    const find = <T extends PipelineEvent['type']>(type: T) => list.find((e): e is Extract<PipelineEvent, { type: T }> => e.type === type);
    const committed = find('result');
    if (committed === undefined) continue;
    const { result } = committed;
    const receivedAt = find('received')?.at ?? result.timing.receivedAt;
    const decidedAt = find('decided')?.at;
    const asked = find('approval-requested');
    const answered = find('approval-answered');
    const started = find('started');
    const finishedAt = find('finished')?.at ?? result.timing.finishedAt;
    const waits: TimelineWait[] = [];
    if (decidedAt !== undefined && decidedAt > receivedAt) waits.push({ kind: 'policy', from: receivedAt, to: decidedAt });
    if (asked !== undefined) waits.push({ kind: 'approval', from: asked.at, to: answered?.at ?? started?.at ?? finishedAt });
    const attempts: TimelineSpan[] = [];
    if (started !== undefined) {
      const admittedAt = answered?.at ?? decidedAt ?? receivedAt;
      if (started.at > admittedAt) waits.push({ kind: 'queue', from: admittedAt, to: started.at });
      let from = started.at;
      for (const retry of list.filter((e) => e.type === 'retry')) {
        attempts.push({ from, to: retry.at });
        from = retry.at + retry.delayMs;
      }
      attempts.push({ from, to: Math.max(from, result.timing.endedAt ?? finishedAt) });
    }
    calls.push({
      ...callIdentity(result, exclusive),
      receivedAt,
      waits,
      attempts,
      finishedAt,
      committedAt: committed.at,
    });
  }
  return calls;
}
