import type { PipelineEvent } from '../../types/events.js';
import type { ToolResult } from '../../types/toolResult.js';

/** Where a call is, as a progress line says it. */
export type CallState = 'checking' | 'queued' | 'awaiting approval' | 'running' | 'retrying' | 'done';

/** One call as the progress lines track it, updated by each of its events. */
export interface CallLine {
  readonly index: number;
  readonly id: string;
  readonly name: string;
  state: CallState;
  /** When the current state began (the pipeline's clock). */
  since: number;
  receivedAt: number;
  startedAt: number | undefined;
  /** What the state says besides its name: the last progress value, the failed attempt, the outcome. */
  detail: string;
  /** Its result, once finished. */
  result: ToolResult | undefined;
}

/** The key of a call among the events of several runs (an observer sees them all). */
export const callKey = (e: PipelineEvent): string => `${e.turn ?? ''}\u0000${e.index}\u0000${e.id}`;

/**
 * Applies an event to its call's line (a new line on `received`, or on any first event of a call);
 * returns whether the state changed in a way a plain log prints (a start, a retry, an approval asked,
 * the end), so one line is printed per change that matters and not one per progress report.
 */
export function applyEvent(lines: Map<string, CallLine>, e: PipelineEvent): { readonly line: CallLine; readonly printable: boolean } {
  const key = callKey(e);
  let line = lines.get(key);
  if (line === undefined) {
    line = { index: e.index, id: e.id, name: e.name, state: 'checking', since: e.at, receivedAt: e.at, startedAt: undefined, detail: '', result: undefined };
    lines.set(key, line);
  }
  const to = (state: CallState, detail = '') => {
    line.state = state;
    line.since = e.at;
    line.detail = detail;
  };
  switch (e.type) {
    case 'received':
      return { line, printable: false };
    case 'decided':
      if (e.decision === 'allow') to('queued');
      return { line, printable: false };
    case 'approval-requested':
      to('awaiting approval');
      return { line, printable: true };
    case 'approval-answered':
      if (e.approved) to('queued');
      return { line, printable: false };
    case 'started':
      line.startedAt = e.at;
      to('running');
      return { line, printable: true };
    case 'progress':
      // A report after a retry comes from the next attempt: the call runs again.
      if (line.state === 'retrying') line.state = 'running';
      line.detail = compact(e.value);
      return { line, printable: false };
    case 'retry':
      to('retrying', `attempt ${e.attempt} failed (${e.error.code}), again in ${duration(e.delayMs)}`);
      return { line, printable: true };
    case 'finished':
    case 'result':
      if (line.result !== undefined) return { line, printable: false };
      line.result = e.result;
      to('done', outcome(e.result));
      return { line, printable: true };
  }
}

/** How a call ended: `ok`, or its status and, when it says more, its error code. */
export function outcome(result: ToolResult): string {
  const status = result.status === 'error' && result.error.code === 'timeout' ? 'timeout' : result.status;
  return result.error === undefined || result.error.code === status ? status : `${status} (${result.error.code})`;
}

/** A duration as people read it: `42 ms`, `1.3 s`, `2 min 5 s`. */
export function duration(ms: number): string {
  if (!(ms >= 0)) return '0 ms';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** The line's mark: what a glance needs. */
export function icon(line: CallLine): string {
  if (line.state !== 'done') return line.state === 'running' || line.state === 'retrying' ? '▸' : line.state === 'awaiting approval' ? '?' : '·';
  return line.result?.status === 'ok' ? '✓' : line.result?.status === 'suspended' ? '‖' : '✗';
}

/**
 * The line's text at `now`: `✓ read_file toolu_02 ok in 252 ms`, `▸ search toolu_06 running 1.2 s`
 * (without `now`, no elapsed time: a plain line printed as the state begins). A finished call's time is
 * its body's (from start to end) when it ran, else from its arrival.
 */
export function describeLine(line: CallLine, now?: number): string {
  const head = `${icon(line)} ${line.name} ${line.id}`;
  if (line.state === 'done') {
    const end = line.result?.timing.finishedAt ?? line.since;
    const from = line.result?.timing.startedAt ?? line.receivedAt;
    return `${head} ${line.detail} in ${duration((line.result?.timing.endedAt ?? end) - from)}`;
  }
  const since = line.state === 'running' || line.state === 'retrying' ? (line.startedAt ?? line.since) : line.since;
  const elapsed = now === undefined ? '' : ` ${duration(now - since)}`;
  return `${head} ${line.state}${elapsed}${line.detail === '' ? '' : ` · ${line.detail}`}`;
}

/** A progress value in a few characters (the line has one row of the terminal). */
function compact(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value) ?? String(value);
  const chars = [...text];
  return chars.length > 60 ? `${chars.slice(0, 59).join('')}…` : text;
}
