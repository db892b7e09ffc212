/**
 * Issue 24, finding 3: a long-lived `operator()` subscription kept every cancelled turn forever — the
 * failing record with its error and stack, in the pool's and the batch's per-turn maps: about 1 KB a
 * turn. Runs turns through one subscription, each with an exclusive call that fails and a read it
 * cancels, as a conversation would (each turn answered before the next), and prints one JSON line:
 * the heap after GC once warmed up and after `TURNS` more turns, and the same without failures.
 * Run in a child process with `--expose-gc` (see ../cancelledTurns.test.ts).
 */
import { Subject } from 'rxjs';
import { z } from 'zod';
import { createPipeline, defineTool, type ToolCall } from '../../../src/index.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');
const heapAfterGc = (): number => {
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed;
};

const TURNS = Number(process.argv[2] ?? 20_000);
/**
 * Enough for every bounded window to be full: the duplicate-id window (it holds 10,001 to 20,000 ids
 * once the first 10,000 are in, in two generations), the last 1,000 cancelled turns. The samples after
 * the warm-up are `TURNS / 2` turns (`TURNS` ids) apart: with `TURNS` a multiple of 10,000 the id window
 * is at the same point of its generation at each, so it adds nothing to `bytesPerTurn`.
 */
const WARM_UP = 6_000;
const input = z.object({ path: z.string() });
const write = defineTool({
  name: 'write_file',
  description: 'write',
  input,
  execute: ({ path }) => {
    if (path.startsWith('fail')) throw new Error(`EACCES: ${path} is read-only`);
    return `wrote ${path}`;
  },
});
const read = defineTool({ name: 'read_file', description: 'read', input, mode: 'parallel', execute: ({ path }) => path });

/** One subscription for the whole soak; `turns(n, fail)` feeds n more turns and resolves once all are answered. */
function conversation() {
  const calls = new Subject<ToolCall>();
  let answered = 0;
  let turn = 0;
  const statuses = new Map<string, number>();
  calls.pipe(createPipeline({ tools: [write, read] }).operator()).subscribe((result) => {
    answered++;
    statuses.set(result.status, (statuses.get(result.status) ?? 0) + 1);
  });
  return {
    statuses,
    async turns(count: number, fail: boolean): Promise<void> {
      for (let i = 0; i < count; i++, turn++) {
        const expected = answered + 2;
        calls.next({ id: `w${turn}`, name: 'write_file', args: { path: `${fail ? 'fail' : 'ok'}-${turn}` }, turn: `msg_${turn}` });
        calls.next({ id: `r${turn}`, name: 'read_file', args: { path: `r-${turn}` }, turn: `msg_${turn}` });
        if (answered !== expected) throw new Error(`turn ${turn}: ${answered - expected + 2} of 2 calls answered`);
        if (turn % 1_000 === 0) await new Promise((resolve) => setImmediate(resolve));
      }
    },
  };
}

/**
 * The heap after GC once warmed up, halfway and at the end: `retainedBytes` over all `TURNS`, and
 * `bytesPerTurn` over the second half (a one-off of a few hundred KB — compiled code, table sizes —
 * lands in the first half, measured the same with 10k and 40k turns).
 */
async function soak(fail: boolean) {
  const run = conversation();
  await run.turns(WARM_UP, fail);
  const before = heapAfterGc();
  await run.turns(TURNS / 2, fail);
  const halfway = heapAfterGc();
  await run.turns(TURNS / 2, fail);
  const after = heapAfterGc();
  return { turns: TURNS, retainedBytes: after - before, bytesPerTurn: (after - halfway) / (TURNS / 2), statuses: Object.fromEntries(run.statuses) };
}

console.log(JSON.stringify({ failing: await soak(true), succeeding: await soak(false) }));
