import { appendFileSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The safety net under every process a test starts: each one carries a mark in its environment
 * (`TOOLSTREAM_TEST_SPAWNED_BY=<run>:<file>`, set by `setup.ts` before the test file loads, so every
 * child inherits it — and the children's children, such as the worker processes an example starts or
 * Chromium's helpers), and whatever still runs with the mark once its file ended is SIGKILLed: by the
 * file's last `afterAll`, by the file's process on exit, and by the run's global teardown.
 *
 * A test stops what it starts itself; this catches what a failed or timed-out one could not (a
 * `beforeAll` that timed out while a server was starting, a test that failed before its `finally`).
 * It reads `/proc`, so it works on Linux (CI); elsewhere it finds nothing.
 */
export const MARK = 'TOOLSTREAM_TEST_SPAWNED_BY';
/** The run's id and the directory its processes write what they killed to, set by `globalSetup.ts`. */
export const RUN = 'TOOLSTREAM_TEST_RUN';
export const RUN_DIR = 'TOOLSTREAM_TEST_RUN_DIR';

/**
 * A helper that serves the process that started it and ends with it (its stdin closes): esbuild's
 * service, which tsup's `build` leaves running in a test file's process. Not a leftover.
 */
const SERVES_ITS_PARENT = /\besbuild\b.* --service=/;

/** A process the net killed: its pid and command line, and the test file whose mark it carried. */
export interface Leftover {
  readonly pid: number;
  readonly command: string;
  readonly file: string;
}

/** The pids of the processes whose environment holds `MARK=` followed by `prefix` (a run, or a run and file). */
function marked(prefix: string): { readonly pid: number; readonly mark: string }[] {
  if (!existsSync('/proc/self/environ')) return [];
  const found: { pid: number; mark: string }[] = [];
  const wanted = `${MARK}=${prefix}`;
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    let environ: string;
    try {
      environ = readFileSync(`/proc/${pid}/environ`, 'latin1');
    } catch {
      continue; // gone meanwhile, or not ours to read
    }
    const mark = environ.split('\0').find((variable) => variable.startsWith(wanted));
    if (mark !== undefined && !SERVES_ITS_PARENT.test(commandOf(pid))) found.push({ pid, mark: mark.slice(MARK.length + 1) });
  }
  return found;
}

function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').replace(/\s+/g, ' ').trim().slice(0, 200);
  } catch {
    return '?';
  }
}

/** How many processes with the mark `prefix` still run. */
export function countMarked(prefix: string): number {
  return marked(prefix).filter(({ pid }) => !isZombie(pid)).length;
}

/**
 * SIGKILLs every process still running with the mark `prefix` (every round of a few, until none is left:
 * a parent killed first cannot start another), and writes each to the run's `leftovers.jsonl` for the
 * reporter. Synchronous, so it can run in an `exit` listener. Returns what it killed.
 */
export function killMarked(prefix: string): Leftover[] {
  const killed: Leftover[] = [];
  for (let round = 0; round < 5; round++) {
    const alive = marked(prefix).filter(({ pid }) => !isZombie(pid));
    if (alive.length === 0) break;
    for (const { pid, mark } of alive) {
      const command = commandOf(pid);
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        continue; // it ended meanwhile
      }
      if (!killed.some((k) => k.pid === pid)) killed.push({ pid, command, file: mark.slice(mark.indexOf(':') + 1) });
    }
  }
  const dir = process.env[RUN_DIR];
  if (dir !== undefined && killed.length > 0) appendFileSync(join(dir, 'leftovers.jsonl'), killed.map((k) => `${JSON.stringify(k)}\n`).join(''));
  return killed;
}

/** A process that ended and waits for its parent to reap it: nothing left to kill. */
function isZombie(pid: number): boolean {
  try {
    return / Z /.test(readFileSync(`/proc/${pid}/stat`, 'latin1').replace(/^.*\)/, ''));
  } catch {
    return true; // gone
  }
}

/** What the processes of this run killed, from `leftovers.jsonl`. */
export function readLeftovers(): Leftover[] {
  const dir = process.env[RUN_DIR];
  if (dir === undefined || !existsSync(join(dir, 'leftovers.jsonl'))) return [];
  return readFileSync(join(dir, 'leftovers.jsonl'), 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Leftover);
}
