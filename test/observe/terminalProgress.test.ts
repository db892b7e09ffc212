import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { map, tap, timer } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { askTools, ConfigError, createPipeline, defineTool, denyTools, terminalProgress, type PipelineEvent, type ProgressOutput, type ToolCall } from '../../src/index.js';

// The progress renderer on a plain stream (exact lines) and on a fake terminal (a screen that applies
// the ANSI moves it writes), driven by a real pipeline in virtual time so every time is exact.

const work = defineTool({
  name: 'work',
  description: 'takes `frames` ms, reporting progress once, failing when asked',
  input: z.object({ frames: z.number(), fail: z.boolean().optional() }),
  mode: 'parallel',
  execute: ({ frames, fail }, ctx) => {
    ctx.progress({ step: 1 });
    return timer(frames).pipe(map(() => {
      if (fail === true) throw new Error('broken');
      return 'done';
    }));
  },
});
const write = defineTool({ name: 'write_file', description: 'writes', input: z.object({}), mode: 'exclusive', execute: () => timer(5).pipe(map(() => 'written')) });
const rm = defineTool({ name: 'rm', description: 'never', input: z.object({}), mode: 'parallel', execute: () => 'gone' });

const CALLS: ToolCall[] = [
  { id: 'toolu_01', name: 'work', args: { frames: 40 } },
  { id: 'toolu_02', name: 'work', args: { frames: 10, fail: true } },
  { id: 'toolu_03', name: 'write_file', args: {} },
  { id: 'toolu_04', name: 'rm', args: {} },
];

/** Runs CALLS in virtual time (the approver answers `answer` after 30 frames), each event to `progress` at its frame. */
function runVirtual(makeProgress: (clock: () => number) => { event(e: PipelineEvent): void }, answer: 'allowed-once' | 'rejected') {
  const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
  scheduler.run(({ cold, flush }) => {
    const progress = makeProgress(() => scheduler.now());
    const pipeline = createPipeline({
      tools: [work, write, rm],
      concurrency: 2,
      pre: [denyTools(['rm']), askTools(['write_file'])],
      approve: () => timer(30).pipe(map(() => answer)),
      scheduler,
    });
    pipeline.events(cold('(abcd|)', { a: CALLS[0]!, b: CALLS[1]!, c: CALLS[2]!, d: CALLS[3]! })).pipe(tap((e) => progress.event(e))).subscribe();
    flush();
  });
}

/** A stream that keeps what is written. */
function plainStream(): ProgressOutput & { text: string } {
  const out = { text: '', write: (chunk: string) => void (out.text += chunk) };
  return out;
}

/**
 * A fake terminal: `isTTY`, `columns`, and a screen that applies what the renderer writes (text, line
 * feeds, carriage returns, cursor up `ESC[nA`, erase line `ESC[2K`, erase below `ESC[J`).
 */
function fakeTerminal(columns = 60, rows?: number): ProgressOutput & { screen: string[]; writes: string[] } {
  const screen: string[] = [''];
  let row = 0;
  let col = 0;
  const term = {
    isTTY: true,
    columns,
    ...(rows === undefined ? {} : { rows }),
    screen,
    writes: [] as string[],
    write(chunk: string) {
      term.writes.push(chunk);
      for (const token of chunk.match(/\x1b\[\d*[A-Za-z]|[\s\S]/gu) ?? []) {
        const csi = /^\x1b\[(\d*)([A-Za-z])$/.exec(token);
        if (csi !== null) {
          if (csi[2] === 'A') row = Math.max(0, row - Number(csi[1] || 1));
          else if (csi[2] === 'K') screen[row] = '';
          else if (csi[2] === 'J') screen.splice(row + 1), (screen[row] = [...(screen[row] ?? '')].slice(0, col).join(''));
          continue;
        }
        if (token === '\n') {
          row++;
          col = 0;
          if (screen.length <= row) screen.push('');
        } else if (token === '\r') col = 0;
        else {
          const line = [...(screen[row] ?? '')];
          line[col++] = token;
          screen[row] = line.join('');
        }
      }
    },
  };
  return term;
}

afterEach(() => vi.useRealTimers());

describe('terminalProgress', () => {
  it('on a plain stream, a line per change that matters, with exact times', () => {
    const out = plainStream();
    runVirtual(() => terminalProgress(out), 'rejected');
    expect(out.text.split('\n')).toEqual([
      '▸ work toolu_01 running',
      '▸ work toolu_02 running',
      '? write_file toolu_03 awaiting approval',
      '✗ work toolu_02 error (tool_error) in 10 ms',
      '✗ write_file toolu_03 denied (approval_rejected) in 30 ms',
      '✗ rm toolu_04 denied in 30 ms', // decided after the write before it: the policies take calls in order
      '✓ work toolu_01 ok in 40 ms',
      '',
    ]);
  });

  it('on a plain stream with plain: "results", one line per call in model order', () => {
    const out = plainStream();
    runVirtual(() => terminalProgress(out, { plain: 'results' }), 'allowed-once');
    expect(out.text.split('\n')).toEqual([
      '✓ work toolu_01 ok in 40 ms',
      '✗ work toolu_02 error (tool_error) in 10 ms',
      '✓ write_file toolu_03 ok in 5 ms',
      '✗ rm toolu_04 denied in 30 ms',
      '',
    ]);
  });

  it('plain lines say a retry; a live line shows the last progress value, cut, and runs again after a retry', () => {
    const out = plainStream();
    const term = fakeTerminal(200);
    const plain = terminalProgress(out);
    const live = terminalProgress(term, { clock: () => 20, refreshMs: 0 });
    const base = { index: 0, id: 'f1', name: 'fetch', turn: undefined };
    const result = { ...base, status: 'ok', error: undefined, timing: { receivedAt: 0, startedAt: 1, endedAt: 30, finishedAt: 31 } } as never;
    const events: PipelineEvent[] = [
      { ...base, type: 'received', at: 0, done: false },
      { ...base, type: 'decided', at: 0, decision: 'allow', decidedBy: '(default)', reasons: [] },
      { ...base, type: 'started', at: 1 },
      { ...base, type: 'retry', at: 5, attempt: 1, delayMs: 10, error: { code: 'tool_error', message: 'HTTP 503', cause: undefined } },
      { ...base, type: 'progress', at: 16, value: { text: 'x'.repeat(100) }, truncated: false, sequence: 1 },
      { ...base, type: 'finished', at: 31, status: 'ok', result },
      { ...base, type: 'result', at: 32, result },
    ];
    events.forEach((e, i) => {
      plain.event(e);
      live.event(e);
      if (i === 4) expect(term.screen[0]).toBe(`▸ fetch f1 running 19 ms · {"text":"${'x'.repeat(50)}…`); // a report from the next attempt
    });
    expect(out.text.split('\n')).toEqual(['▸ fetch f1 running', '▸ fetch f1 retrying · attempt 1 failed (tool_error), again in 10 ms', '✓ fetch f1 ok in 29 ms', '']);
  });

  it('on a terminal, a live line per call updated in place; each result above them as it is given out', () => {
    const term = fakeTerminal();
    const frames: string[][] = [];
    runVirtual((clock) => {
      const progress = terminalProgress(term, { clock, refreshMs: 0, holdDuringApprovals: false });
      return { event: (e) => (progress.event(e), frames.push([...term.screen])) };
    }, 'allowed-once');
    // While toolu_01 runs and the write waits for its answer (frame 20): both live, with their elapsed times.
    const during = frames.find((f) => f.some((l) => l.startsWith('✗ work toolu_02')))!;
    expect(during).toEqual(['▸ work toolu_01 running 10 ms · {"step":1}', '✗ work toolu_02 error (tool_error) in 10 ms', '? write_file toolu_03 awaiting approval 10 ms', '· rm toolu_04 checking 10 ms', '']);
    // At the end: every call's final line once, in model order, and no live line left.
    expect(term.screen).toEqual(['✓ work toolu_01 ok in 40 ms', '✗ work toolu_02 error (tool_error) in 10 ms', '✓ write_file toolu_03 ok in 5 ms', '✗ rm toolu_04 denied in 30 ms', '']);
    // Updated in place: the screen never held more lines than calls (plus the cursor's line).
    expect(Math.max(...frames.map((f) => f.length))).toBeLessThanOrEqual(CALLS.length + 1);
  });

  it('on a terminal, elapsed times are redrawn between events, lines are cut to the width, and logged lines go above', () => {
    vi.useFakeTimers();
    const term = fakeTerminal(30);
    let now = 0;
    const progress = terminalProgress(term, { clock: () => now, refreshMs: 100 });
    const started = (index: number, id: string, name: string): PipelineEvent => ({ index, id, name, turn: undefined, type: 'started', at: 0 });
    progress.event(started(0, 'c1', 'build'));
    now = 1500;
    vi.advanceTimersByTime(100);
    expect(term.screen).toEqual(['▸ build c1 running 1.5 s', '']);
    progress.event(started(1, 'c2', 'a_rather_long_tool_name'));
    expect(term.screen).toEqual(['▸ build c1 running 1.5 s', '▸ a_rather_long_tool_name c2…', '']); // 29 cells: the last column stays free
    now = 2500;
    vi.advanceTimersByTime(100);
    progress.log(`a line of my own, longer than the terminal's 30 columns`);
    expect(term.screen).toEqual([`a line of my own, longer than the terminal's 30 columns`, '▸ build c1 running 2.5 s', '▸ a_rather_long_tool_name c2…', '']);
    progress.end();
    now = 3000;
    vi.advanceTimersByTime(1000);
    expect(term.writes.length).toBeGreaterThan(0);
    const writes = term.writes.length;
    vi.advanceTimersByTime(1000);
    expect(term.writes.length).toBe(writes); // ended: no more redraws
  });

  it('holds its lines while an approval is asked, so a prompt at the same terminal is not drawn over', () => {
    const term = fakeTerminal();
    runVirtual((clock) => {
      const progress = terminalProgress(term, { clock, refreshMs: 0 });
      return {
        event: (e) => {
          progress.event(e);
          if (e.type === 'approval-requested') term.write('  ? approve write_file [y/N] y\n'); // what a prompt writes
        },
      };
    }, 'allowed-once');
    const prompt = term.screen.indexOf('  ? approve write_file [y/N] y');
    expect(prompt).toBeGreaterThanOrEqual(0);
    // Nothing was drawn over or after the prompt while it waited; afterwards the results follow it.
    expect(term.screen.slice(prompt + 1)).toEqual(['✓ work toolu_01 ok in 40 ms', '✗ work toolu_02 error (tool_error) in 10 ms', '✓ write_file toolu_03 ok in 5 ms', '✗ rm toolu_04 denied in 30 ms', '']);
  });

  it('cuts the live lines to the terminal height', () => {
    const term = fakeTerminal(60, 3);
    const progress = terminalProgress(term, { clock: () => 0, refreshMs: 0 });
    for (let i = 0; i < 5; i++) progress.event({ index: i, id: `c${i}`, name: 'work', turn: undefined, type: 'started', at: 0 });
    expect(term.screen).toEqual(['▸ work c0 running 0 ms', '… and 4 more calls', '']);
  });

  it('rejects malformed options eagerly', () => {
    expect(() => terminalProgress({} as ProgressOutput)).toThrow(ConfigError);
    expect(() => terminalProgress(plainStream(), { plain: 'all' as 'changes' })).toThrow('terminalProgress: `plain` must be "changes" or "results"');
    expect(() => terminalProgress(plainStream(), { refreshMs: -1 })).toThrow('`refreshMs`');
  });

  it('examples/readme/progress.ts (the docs\' code) runs, its plain lines as it checks them', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'examples/readme/progress.ts'], { encoding: 'utf8' });
    expect(stdout).toMatch(/^▸ fetch_page call_1 running$/m);
    expect(stdout).toMatch(/^✓ fetch_page call_2 ok in \d+ ms$/m);
  }, 60_000);
});
