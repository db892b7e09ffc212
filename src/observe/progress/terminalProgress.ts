import { ConfigError } from '../../util/errors.js';
import type { EventObserver, PipelineEvent } from '../../types/events.js';
import { textCells } from '../timeline/svgText.js';
import { applyEvent, callKey, describeLine, type CallLine } from './callLines.js';

/**
 * Where progress is written: `process.stdout`, `process.stderr`, or anything with `write`.
 *
 * @example
 * ```ts
 * const lines: string[] = [];
 * const output: ProgressOutput = { write: (text) => lines.push(text) }; // not a TTY: plain lines
 * ```
 */
export interface ProgressOutput {
  /** Writes text as it is (lines end in `\n`; on a TTY, with the ANSI moves that redraw the live lines). */
  write(text: string): unknown;
  /** A terminal: lines are updated in place. `process.stdout.isTTY`. */
  readonly isTTY?: boolean;
  /** The terminal's width in characters; a live line is cut to fit it (so it never wraps). @default 80 */
  readonly columns?: number;
  /** The terminal's height; live lines beyond it are summed up in one. */
  readonly rows?: number;
}

/**
 * Options of {@link terminalProgress}.
 *
 * @example
 * ```ts
 * const options: TerminalProgressOptions = { plain: 'results', refreshMs: 250 };
 * ```
 */
export interface TerminalProgressOptions {
  /**
   * Live lines, updated in place (a terminal), or plain lines, appended (a pipe, a file, CI logs).
   * @default output.isTTY === true
   */
  readonly live?: boolean;
  /**
   * Plain lines: one per change that matters (an approval asked, a start, a retry, the end, in the
   * order they happen), or only one per call when its result is given out (in model order).
   * @default 'changes'
   */
  readonly plain?: 'changes' | 'results';
  /**
   * Live lines: how often the elapsed times of waiting and running calls are redrawn, in ms (between
   * events); `0` redraws on events only.
   * @default 100
   */
  readonly refreshMs?: number;
  /**
   * Live lines: while an approval is being asked, clear them and draw nothing until it is answered, so
   * a question asked at the same terminal is not drawn over (lines logged meanwhile are kept for after).
   * @default true
   */
  readonly holdDuringApprovals?: boolean;
  /** The pipeline's clock, which events' `at` is on (its `scheduler`'s `now()`), for elapsed times between events. @default () => performance.now() */
  readonly clock?: () => number;
}

/**
 * A progress renderer: give it the pipeline's events (as an event observer, or from `events()`). While
 * it draws live lines, write your own lines with `log`, not `console.log`, or they break the live lines.
 *
 * @example
 * ```ts
 * const progress: TerminalProgress = terminalProgress(process.stdout);
 * progress.log('asking the model…');
 * ```
 */
export interface TerminalProgress extends EventObserver {
  /** Takes one event of a run (every run, when it is one of the pipeline's `observers`). */
  event(event: PipelineEvent): void;
  /** Writes a line of your own above the live lines, without breaking them (plain: just the line). */
  log(text: string): void;
  /** Stops redrawing and draws the last state; a later event starts again. */
  end(): void;
}

/**
 * Shows each call's progress at a terminal, from the pipeline's events: on a TTY a live line per call
 * in flight, updated in place — `· read_file toolu_02 queued 12 ms`, `? write_file toolu_04 awaiting
 * approval 2.1 s`, `▸ search toolu_06 running 1.2 s · {"done":3}` — and, as each result is given out
 * (model order), its final line above them: `✓ read_file toolu_02 ok in 252 ms`, `✗ read_file toolu_05
 * denied in 1 ms`. Elsewhere (a pipe, a file, CI) plain lines, one per change that matters or one per
 * result (`plain`). No dependency: it writes text and ANSI cursor moves to `output`.
 *
 * Times are on the pipeline's clock: a finished call shows its body's time (start to end), or the time
 * from its arrival when it never started. Calls of several runs are told apart by turn, index and id.
 *
 * @throws {ConfigError} when an option is malformed.
 * @example
 * ```ts
 * import { lastValueFrom, tap } from 'rxjs';
 * import { createPipeline, terminalProgress } from 'toolstream';
 *
 * const progress = terminalProgress(process.stdout);
 * const pipeline = createPipeline({ tools });
 * await lastValueFrom(pipeline.events(calls).pipe(tap((e) => progress.event(e))));
 * progress.end();
 *
 * // or for every run of a pipeline: createPipeline({ tools, observers: [progress] })
 * ```
 */
export function terminalProgress(output: ProgressOutput, options: TerminalProgressOptions = {}): TerminalProgress {
  const fail = (option: string, expected: string, received: unknown): never => {
    throw new ConfigError('terminalProgress', option, expected, received);
  };
  if (typeof output !== 'object' || output === null || typeof output.write !== 'function') fail('output', 'a stream with write(text)', output);
  if (typeof options !== 'object' || options === null) fail('options', 'an object', options);
  const { live = output.isTTY === true, plain = 'changes', refreshMs = 100, holdDuringApprovals = true, clock = () => performance.now() } = options;
  if (typeof live !== 'boolean') fail('live', 'a boolean', live);
  if (plain !== 'changes' && plain !== 'results') fail('plain', '"changes" or "results"', plain);
  if (!Number.isFinite(refreshMs) || refreshMs < 0) fail('refreshMs', 'a number of ms, 0 or more', refreshMs);
  if (typeof holdDuringApprovals !== 'boolean') fail('holdDuringApprovals', 'a boolean', holdDuringApprovals);
  if (typeof clock !== 'function') fail('clock', 'a function', clock);
  return live ? new LiveLines(output, refreshMs, holdDuringApprovals, clock) : new PlainLines(output, plain);
}

/** Appended lines: one per change that matters, or one per result. */
class PlainLines implements TerminalProgress {
  readonly #lines = new Map<string, CallLine>();

  constructor(
    private readonly output: ProgressOutput,
    private readonly mode: 'changes' | 'results',
  ) {}

  event(e: PipelineEvent): void {
    const { line, printable } = applyEvent(this.#lines, e);
    if (this.mode === 'changes' ? printable : e.type === 'result') this.output.write(`${describeLine(line)}\n`);
    if (e.type === 'result') this.#lines.delete(callKey(e));
  }

  log(text: string): void {
    this.output.write(`${text}\n`);
  }

  end(): void {}
}

/** Lines updated in place: the calls in flight at the bottom, each result's final line above them. */
class LiveLines implements TerminalProgress {
  readonly #lines = new Map<string, CallLine>();
  /** Lines to print above the live ones at the next frame: results given out, and logged lines. */
  #above: string[] = [];
  /** How many live lines the last frame drew (the cursor is on the line below them). */
  #drawn = 0;
  /** The calls whose approval is being asked: nothing is drawn meanwhile. */
  readonly #asking = new Set<string>();
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly output: ProgressOutput,
    private readonly refreshMs: number,
    private readonly hold: boolean,
    private readonly clock: () => number,
  ) {}

  event(e: PipelineEvent): void {
    const key = callKey(e);
    const { line } = applyEvent(this.#lines, e);
    if (e.type === 'result') {
      this.#above.push(describeLine(line, e.at));
      this.#lines.delete(key);
    }
    if (this.hold && e.type === 'approval-requested') {
      if (this.#asking.size === 0) this.#clear();
      this.#asking.add(key);
    }
    if (e.type === 'approval-answered' || e.type === 'finished' || e.type === 'result') this.#asking.delete(key);
    this.#draw();
  }

  log(text: string): void {
    this.#above.push(...text.split('\n'));
    this.#draw();
  }

  end(): void {
    this.#asking.clear();
    this.#draw();
    this.#tick(false);
  }

  /** Takes the live lines off the screen (the cursor goes back to where they began). */
  #clear(): void {
    if (this.#drawn > 0) this.output.write(`${up(this.#drawn)}\r\x1b[J`);
    this.#drawn = 0;
  }

  /** One frame, written at once: back to the top of the live lines, the lines above, the live lines. */
  #draw(): void {
    if (this.#asking.size > 0) return;
    // A size of 0 is unknown (a pseudo-terminal nobody sized): then 80 columns, and no limit of rows.
    const { columns = 0, rows = 0 } = this.output;
    const width = columns > 0 ? Math.max(10, columns) : 80;
    const now = this.clock();
    let live = [...this.#lines.values()].map((line) => describeLine(line, now));
    const room = rows > 0 ? Math.max(2, rows - 1) : Infinity;
    if (live.length > room) live = [...live.slice(0, room - 1), `… and ${live.length - room + 1} more calls`];
    // Lines above may wrap (they scroll away); a live line must not, or moving back up would miss it.
    const frame = [...this.#above, ...live.map((text) => fit(text, width - 1))].map((text) => `\x1b[2K${text}\n`).join('');
    this.output.write(`${this.#drawn > 0 ? `${up(this.#drawn)}\r` : ''}${frame}\x1b[J`);
    this.#above = [];
    this.#drawn = live.length;
    this.#tick(this.#lines.size > 0);
  }

  /** Keeps a timer redrawing elapsed times while calls are in flight, and none otherwise. */
  #tick(on: boolean): void {
    if (on && this.#timer === undefined && this.refreshMs > 0) {
      this.#timer = setInterval(() => this.#draw(), this.refreshMs);
      this.#timer.unref?.(); // progress never keeps a process alive
    } else if (!on && this.#timer !== undefined) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }
}

const up = (lines: number) => `\x1b[${lines}A`;

/** `text` cut to `cells` terminal cells (wide characters take two), ending in `…` when cut. */
function fit(text: string, cells: number): string {
  if (textCells(text) <= cells) return text;
  let out = '';
  let used = 0;
  for (const c of text) {
    const width = textCells(c);
    if (used + width > cells - 1) break;
    out += c;
    used += width;
  }
  return `${out}…`;
}
