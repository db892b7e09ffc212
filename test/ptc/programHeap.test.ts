/**
 * Issue 10, item 6: a program cannot run the host out of memory. The reported program (three
 * `run_code` calls in one turn, each re-sending a 12 MB string to a tool whose schema rejects it) used
 * to keep every sub-call's arguments, about 2.2 GB per call, and killed the process. Run in a child
 * process, so that a regression fails this test instead of killing the suite.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const MiB = 2 ** 20;
const SCENARIO = fileURLToPath(new URL('./heap/resendScenario.ts', import.meta.url));

interface Report {
  readonly results: readonly { status: string; value: unknown; logged: number; omitted: unknown }[];
  readonly retainedBytes: number;
}

function runScenario(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  // The child's heap is capped well above the bound, so that the old behaviour fails fast (over the
  // bound, or out of memory) without taking the machine's memory.
  const args = ['--expose-gc', '--max-old-space-size=1024', '--import', 'tsx', SCENARIO];
  return new Promise((resolve) => {
    execFile(process.execPath, args, { maxBuffer: 16 * MiB, timeout: 290_000 } /* under the test's own: a ceiling only a hang reaches (about 100 s at load 25) */, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr });
    });
  });
}

describe('a program that re-sends huge arguments', () => {
  it('ends with a result, and the host holds only the bounded log', { timeout: 300_000 }, async () => {
    const { code, stdout, stderr } = await runScenario();
    expect(code, stderr.slice(-2_000)).toBe(0);
    const report = JSON.parse(stdout.trim().split('\n').at(-1)!) as Report;
    expect(report.results.map((result) => result.status)).toEqual(['ok', 'ok', 'ok']);
    // The documented bound: each result's log holds at most maxLoggedChars (1,000,000) characters of
    // arguments and messages and maxLoggedSubCalls (1000) entries. Three results: well under 16 MiB
    // (measured: about 3 MiB; the old code kept about 400 MB here).
    expect(report.retainedBytes).toBeLessThan(16 * MiB);
    const perCall = {
      status: 'ok',
      // The 12 MB calls never left the interpreter; of the 50 at once, 11 fit in the 10,000,000
      // characters that may be pending at once.
      value: { args_too_large: 5, invalid_args: 41, pending_args_too_large: 39 },
      logged: 41,
      // Of the calls that reached the pipeline, the log kept the first one's 900,033 characters of
      // arguments and every message, and counts the 40 arguments it left out.
      omitted: { entries: 0, characters: 40 * 900_033 },
    };
    expect(report.results).toEqual([perCall, perCall, perCall]);
  });
});
