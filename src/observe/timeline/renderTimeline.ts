import { ConfigError } from '../../util/errors.js';
import type { PipelineEvent } from '../../types/events.js';
import type { ToolMode } from '../../types/tool.js';
import type { ToolResult } from '../../types/toolResult.js';
import { drawTimeline } from './drawTimeline.js';
import { callsFromEvents } from './fromEvents.js';
import { callsFromResults } from './fromResults.js';

/** Options of {@link renderTimeline}. */
export interface TimelineOptions {
  /**
   * The pipeline's tools (`pipeline.tools`), to tell which calls were exclusive: a result does not say.
   * Without them no call is marked exclusive.
   * @default []
   */
  readonly tools?: readonly { readonly name: string; readonly mode: ToolMode }[];
  /**
   * The picture's width in px, 320 to 10,000; the height follows from the calls (a row each). Without
   * it the width follows the schedule: the median body about 60 px wide, so a schedule many times
   * longer than its calls gets wider and a short one is not stretched, at least 408 px, at most 2,048,
   * and wider (within that) until every label fits beside or in its bar.
   * @default undefined (follows the schedule)
   */
  readonly width?: number;
  /**
   * The heading, also the SVG's accessible `<title>`.
   * @default 'toolstream: the schedule of N calls'
   */
  readonly title?: string;
}

/**
 * Draws how a set of calls was scheduled, as a self-contained SVG string (no scripts, links or external
 * fonts; it opens as a file, in an `<img>`, or inline in HTML). The same input gives the same bytes.
 *
 * What it shows:
 * - **A row per call**, in order of arrival (model order within a run), so every call is visible,
 *   even one that never started.
 * - **A bar per call**, from its body's start to its end (a segment per attempt from events), coloured
 *   by status (`ok`, `error`, `denied`, `cancelled`, `timeout` — an `error` whose code is `timeout` —,
 *   `suspended`; a legend says which). A call that never started (denied, cancelled, or failed before
 *   its body) gets a mark 6 px wide where it was answered (after its waits, such as a rejected approval).
 * - **A label per call, never cut**: the tool name, the id, and how it ended when not `ok`
 *   (`write_file toolu_04 · denied (approval_rejected)`). It goes inside the bar when it fits; else
 *   after the row's marks, or before them; else on lines of its own below them (wrapped, whole). Text
 *   is monospace with its width set (`textLength`), so no label overlaps another or a bar in any
 *   browser. A `<title>` on each call gives the details on hover: status, times, waits, result index.
 * - **The wait before the start**, as a thin strip leading into the bar: the policy stage (hatched
 *   when it asked for an approval: that time is the approval wait) and the queue for a slot.
 * - **Exclusive calls** outlined, with a shaded band across every row: the band stays empty of other
 *   bodies, because a barrier runs alone. Pass `tools` to know which they are.
 * - **When each result was given out in model order**: a tick, joined to its bar by a dotted line when
 *   it waited for earlier results. For the results of one run it is the reorder release (the latest
 *   `finishedAt` of the results up to its index); when indices repeat, its own `finishedAt`.
 * - A time axis in milliseconds from the first call's arrival.
 *
 * From **events** (`pipeline.events()` of one run, collected) it shows more than results can: the
 * approval wait as its own span, the queue from the decision (or the answer) to the start, each attempt
 * of a retried call as its own segment, and the commit at the `result` event itself.
 *
 * Not yet drawn: waits for tool limits or rate limits (add a wait kind once events report them).
 *
 * Elements carry data attributes for tools and tests: `data-call-id`, `data-part` (`body`, `outcome`),
 * `data-status`, `data-start`/`data-end` (ms from the axis origin), `data-wait`, `data-commit-for`,
 * `data-label-for` (with `data-placement`: `inside`, `right`, `left`, `below`).
 *
 * The picture always parses as XML, whatever the ids, names and title hold: a character XML 1.0 cannot
 * hold is drawn as one it can (a C0 control as its picture, `\0` as `␀`; a lone surrogate as `�`), in
 * the text and in the data attributes alike; every other character is drawn as given.
 *
 * @throws {ConfigError} when an option is malformed.
 * @example
 * ```ts
 * import { writeFile } from 'node:fs/promises';
 * import { createPipeline, renderTimeline } from 'toolstream';
 *
 * const pipeline = createPipeline({ tools, concurrency: 4 });
 * const results = await pipeline.run(calls);
 * await writeFile('timeline.svg', renderTimeline(results, { tools: pipeline.tools }));
 *
 * // or from the run's events, which also show approval waits and retries
 * const events = await firstValueFrom(pipeline.events(calls).pipe(toArray()));
 * await writeFile('timeline.svg', renderTimeline(events, { tools: pipeline.tools }));
 * ```
 */
export function renderTimeline(results: readonly ToolResult[] | readonly PipelineEvent[], options: TimelineOptions = {}): string {
  const fail = (option: string, expected: string, received: unknown): never => {
    throw new ConfigError('renderTimeline', option, expected, received);
  };
  if (!Array.isArray(results)) fail('results', 'an array of tool results, or of the events of one run', results);
  const events = results.length > 0 && results.every(isEvent) ? (results as readonly PipelineEvent[]) : undefined;
  if (typeof options !== 'object' || options === null) fail('options', 'an object', options);
  const count = events === undefined ? results.length : events.filter((e) => e.type === 'result').length;
  const { tools = [], width, title = `toolstream: the schedule of ${count} calls` } = options;
  if (!Array.isArray(tools)) fail('tools', 'an array of tools', tools);
  tools.forEach((tool, i) => {
    if (typeof tool !== 'object' || tool === null || typeof tool.name !== 'string') fail(`tools[${i}]`, 'a tool with a name', tool);
    if (tool.mode !== 'parallel' && tool.mode !== 'exclusive') fail(`tools[${i}].mode`, '"parallel" or "exclusive"', tool.mode);
  });
  if (width !== undefined && (!Number.isInteger(width) || width < 320 || width > 10_000)) fail('width', 'an integer from 320 to 10000', width);
  if (typeof title !== 'string') fail('title', 'a string', title);
  const exclusive = new Set(tools.filter((tool) => tool.mode === 'exclusive').map((tool) => tool.name));
  const calls = events === undefined ? callsFromResults(results as readonly ToolResult[], exclusive) : callsFromEvents(events, exclusive);
  return drawTimeline(calls, width, title);
}

/** An element of `pipeline.events()` rather than a result: results have no `type`. */
function isEvent(value: unknown): value is PipelineEvent {
  return typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string' && typeof (value as { at?: unknown }).at === 'number';
}
