import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

/**
 * Time on a busy machine. The suite runs in CI beside other jobs (the check: `.ci/run` with four
 * CPU-bound processes beside it on two cores), where everything takes several times as long as on an
 * idle machine. A test's wall-clock bound is therefore either a generous ceiling that only a hang
 * passes, or an idle-machine bound stretched by how slow the machine is *now* ({@link slowness}, measured
 * in the same run) — never a bare number that only an idle machine meets.
 */

/**
 * How long a process a test starts (node with tsx compiling its imports, a worker connecting to Redis,
 * redis-server) may take to say it is ready: well over what a loaded machine needs, and under the
 * suite's `hookTimeout` (120 s), so a set-up that fails says what did not start.
 */
export const READY_MS = 60_000;

/**
 * How many times slower than an idle machine this process runs now (at least 1): the larger of what a
 * short busy loop measures — the wall-clock time it took over the CPU time it got (a core to itself: 1;
 * one core of two shared with eleven other busy processes: about 6) — and the last minute's load
 * average per core (which also counts the short bursts the loop may miss).
 *
 * @example
 * ```ts
 * expect(ms).toBeLessThan(500 * slowness()); // 500 ms on an idle machine
 * ```
 */
export function slowness(): number {
  const now = performance.now();
  if (last !== undefined && now - last.at < REMEASURE_MS) return last.value;
  const cpuStart = process.cpuUsage();
  while (performance.now() - now < SAMPLE_MS); // spins
  const cpu = process.cpuUsage(cpuStart);
  const cpuMs = (cpu.user + cpu.system) / 1000;
  const measured = cpuMs > 0 ? (performance.now() - now) / cpuMs : 1;
  last = { at: now, value: Math.max(1, measured, loadPerCore()) };
  return last.value;
}

/** The busy loop's length: long enough for the scheduler to share the cores out (a few of its slices). */
const SAMPLE_MS = 30;
/** A measurement holds this long (a test that asks again and again does not spin each time). */
const REMEASURE_MS = 1000;
let last: { readonly at: number; readonly value: number } | undefined;

/** `ms` on an idle machine, stretched by {@link slowness}: a bound that holds on a busy machine as it does on an idle one. */
export function stretched(ms: number): number {
  return ms * slowness();
}

/** The last minute's load average per core (0 where there is no `/proc/loadavg`). */
function loadPerCore(): number {
  try {
    return Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]) / availableParallelism();
  } catch {
    return 0;
  }
}
