/**
 * Load bench: 100k and 1M calls streamed through one subscription of `pipeline.operator()`, checking
 * every result on the fly and measuring time and memory (peak RSS, heap after GC mid-run and at the end).
 *
 * Workload: calls drawn from a seeded PRNG (mulberry32, seed 1), concurrency 10. 20% go to exclusive
 * tools, 80% to parallel ones; each call's body is one of four, uniformly: a sync no-op, an `async`
 * no-op, a short resolved-promise chain (three awaits: microtasks only) and a `setImmediate` hop (one
 * event-loop turn, like the cheapest real I/O). Bodies return the call's `i`. Args are JSON strings
 * (`{"i":123}`), as OpenAI-style stream parsers hand them over, and ids are 30 characters long
 * (`toolu_` + 24), as providers' ids are, and each call is JSON-parsed from its wire text as an SDK
 * would, so the id is a flat string as in production: the pipeline keeps every id of a subscription
 * (duplicate-id detection), so the id's length and representation matter for the memory figures (a
 * 30-character flat id in a Set costs ~68 B; built with a template and `padStart` it costs ~220 B).
 *
 * The source (why it is shaped like this): a model stream, i.e. an async generator consumed through
 * `from(asyncIterable)`, like an SDK's `for await` over response chunks. It never holds the N calls: each
 * call object is made when it is yielded. It yields a chunk of 1–32 calls (a network read can carry
 * several complete tool calls), then awaits a macrotask (`setImmediate`: the next socket read), so the
 * pipeline's timers and `setImmediate` bodies interleave with the stream as they would with real I/O.
 * A real model is also far slower than no-op tools (tens of calls per second at most, against ~10⁵/s
 * here), so in production the calls in flight stay few. A free-running generator is not: it can
 * emit faster than a pool of 10 turns `setImmediate` bodies over, and then the pool's queue grows with
 * N, which is queueing (arrival rate > service rate), not a leak. So the generator also models that
 * rate relation: it waits (macrotask by macrotask) while more than LOAD_LEAD calls (default 256) are in
 * flight (yielded but result not yet out), keeping the pool, the barriers and the reorder buffer busy
 * without letting the source run away. `LOAD_LEAD=Infinity` removes the bound (open loop) and
 * `LOAD_SOURCE=burst` replaces the stream by a synchronous generator through `from(iterable)`: all N
 * calls pushed in one synchronous loop, which necessarily queues all of them (not the model-streaming
 * case; shown for comparison only, never with the targets).
 *
 * Consumer: counts results and checks each on the fly (index === expected, status 'ok', value === index)
 * without keeping any; a failed check or a wrong count exits non-zero.
 *
 * Memory: each size runs in its own child process (`node --expose-gc`, same flags), so one size's heap
 * and RSS do not leak into the next. Peak RSS = max of `process.memoryUsage().rss` sampled every 50 ms
 * and at each checkpoint; the kernel's own peak (`resourceUsage().maxRSS`) is printed beside it. Heap
 * after GC (`gc()` then `heapUsed`) is taken before the run, when half the results are out, when the
 * N-th call has been taken in (the source not yet complete, so everything the live subscription retains
 * is counted; once the source completes, the intake stage's state is released even while the last
 * calls still run) and after completion (everything released). "retained B/call" = (heap all-in − heap
 * before) / N: what the live subscription keeps per call it has seen; flat memory means near 0.
 *
 * Reported, not asserted (targets from the reliability issue): peak RSS ≤ 150 MB, and growth from 100k
 * to 1M ≤ 20% for peak RSS and heap after GC. Sizes: `LOAD_SIZES=100000,1000000` (default).
 */
import { spawnSync } from 'node:child_process';
import { from, Observable } from 'rxjs';
import { z } from 'zod';
import { createPipeline, defineTool, type ToolCall, type ToolResult } from '../src/index.js';
import { collectGarbage, fmt, mulberry32, printHeader } from './common.js';

const CONCURRENCY = 10;
const EXCLUSIVE_SHARE = 0.2;
const MAX_CHUNK = 32;
const SAMPLE_MS = 50;
const SEED = 1;
const SIZES = (process.env['LOAD_SIZES'] ?? '100000,1000000').split(',').map(Number);
const LEAD = Number(process.env['LOAD_LEAD'] ?? 256);
const SOURCE = process.env['LOAD_SOURCE'] === 'burst' ? 'burst' : 'stream';
const TARGET_PEAK_MB = 150;
const TARGET_GROWTH = 1.2;
const RESULT_TAG = 'LOAD_RESULT ';

// ---------------------------------------------------------------------------------------------------
// Tools: {parallel, exclusive} × {sync no-op, async no-op, promise chain, setImmediate}

const input = z.object({ i: z.number() });
type Args = z.infer<typeof input>;
const bodies = {
  sync: ({ i }: Args): number => i,
  async: async ({ i }: Args): Promise<number> => i,
  chain: async ({ i }: Args): Promise<number> => {
    await null;
    await null;
    await null;
    return i;
  },
  immediate: ({ i }: Args): Promise<number> => new Promise((resolve) => setImmediate(resolve, i)),
} as const;
const kinds = Object.keys(bodies) as (keyof typeof bodies)[];
const modes = ['parallel', 'exclusive'] as const;
const tools = modes.flatMap((mode) =>
  kinds.map((kind) => defineTool({ name: `${mode}_${kind}`, description: `${mode} ${kind}`, input, mode, execute: bodies[kind] })),
);

/** Call `i` of the seeded sequence; made on demand, so nothing holds the N calls. */
function callMaker(): (i: number) => ToolCall {
  const random = mulberry32(SEED);
  return (i) => {
    const mode = random() < EXCLUSIVE_SHARE ? 'exclusive' : 'parallel';
    const kind = kinds[Math.floor(random() * kinds.length)]!;
    // As an SDK hands a call over: parsed from the wire, so `id` is a flat string as in production.
    const wire = `{"id":"toolu_${i.toString(36).padStart(24, '0')}","name":"${mode}_${kind}","args":"{\\"i\\":${i}}"}`;
    return JSON.parse(wire) as ToolCall;
  };
}

const macrotask = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** The model-like stream: chunks of 1–32 calls, a macrotask between chunks, at most LEAD in flight. */
async function* modelStream(n: number, inFlight: () => number): AsyncGenerator<ToolCall> {
  const makeCall = callMaker();
  const chunkSize = mulberry32(SEED + 1);
  let i = 0;
  while (i < n) {
    const end = Math.min(n, i + 1 + Math.floor(chunkSize() * MAX_CHUNK));
    while (i < end) yield makeCall(i++);
    await macrotask();
    while (inFlight() > LEAD) await macrotask();
  }
}

/** Not the model case: every call pushed in one synchronous loop. */
function* burst(n: number): Generator<ToolCall> {
  const makeCall = callMaker();
  for (let i = 0; i < n; i++) yield makeCall(i);
}

// ---------------------------------------------------------------------------------------------------
// One size, in a child process

interface Measurement {
  n: number;
  source: string;
  lead: number;
  ok: boolean;
  failure?: string;
  results: number;
  ms: number;
  maxInFlight: number;
  peakRssMb: number;
  maxRssMb: number;
  rssBeforeMb: number;
  heapBeforeMb: number;
  /** Heap after GC when N/2 results are out. */
  heapMidMb: number;
  /** Heap after GC when the N-th call has been taken in (the source not yet complete). */
  heapLastInMb: number;
  /** Heap after GC after completion. */
  heapAfterMb: number;
}

const MB = 1024 * 1024;
const heapAfterGc = (): number => {
  collectGarbage();
  return process.memoryUsage().heapUsed / MB;
};

async function measure(n: number): Promise<Measurement> {
  const pipeline = createPipeline({ tools, concurrency: CONCURRENCY });
  let emitted = 0;
  let received = 0;
  let maxInFlight = 0;
  let failure: string | undefined;

  let peakRss = 0;
  const sampleRss = (): void => {
    const rss = process.memoryUsage().rss;
    if (rss > peakRss) peakRss = rss;
  };
  const rssBeforeMb = process.memoryUsage().rss / MB;
  const heapBeforeMb = heapAfterGc();
  let heapMidMb = NaN;
  let heapLastInMb = NaN;

  const calls = SOURCE === 'burst' ? from(burst(n)) : from(modelStream(n, () => emitted - received));
  // Counts calls as the pipeline takes them in, and takes the "all calls in" checkpoint.
  const counted = new Observable<ToolCall>((subscriber) =>
    calls.subscribe({
      next: (call) => {
        emitted++;
        if (emitted - received > maxInFlight) maxInFlight = emitted - received;
        subscriber.next(call);
        if (emitted === n) {
          // Every call is in and the source has not completed: all per-subscription state is live.
          sampleRss();
          heapLastInMb = heapAfterGc();
        }
      },
      error: (error: unknown) => subscriber.error(error),
      complete: () => subscriber.complete(),
    }),
  );

  const sampler = setInterval(sampleRss, SAMPLE_MS);
  const start = performance.now();
  await new Promise<void>((resolve) => {
    counted.pipe(pipeline.operator()).subscribe({
      next: (result: ToolResult) => {
        const expected = received++;
        if (failure === undefined && (result.index !== expected || result.status !== 'ok' || result.value !== expected)) {
          const detail = result.status === 'ok' ? `value ${String(result.value)}` : `${result.error.code}: ${result.error.message}`;
          failure = `result #${expected}: index ${result.index}, status ${result.status}, ${detail}`;
        }
        if (received === n >> 1) {
          sampleRss();
          heapMidMb = heapAfterGc();
        }
      },
      error: (error: unknown) => {
        failure ??= `stream errored: ${String(error)}`;
        resolve();
      },
      complete: () => resolve(),
    });
  });
  const ms = performance.now() - start;
  clearInterval(sampler);
  sampleRss();
  if (failure === undefined && received !== n) failure = `${received} results for ${n} calls`;
  const heapAfterMb = heapAfterGc();
  return {
    n,
    source: SOURCE,
    lead: LEAD,
    ok: failure === undefined,
    ...(failure === undefined ? {} : { failure }),
    results: received,
    ms,
    maxInFlight,
    peakRssMb: peakRss / MB,
    maxRssMb: process.resourceUsage().maxRSS / 1024,
    rssBeforeMb,
    heapBeforeMb,
    heapMidMb,
    heapLastInMb,
    heapAfterMb,
  };
}

// ---------------------------------------------------------------------------------------------------
// The parent: one child per size, then the table and the ratios

function runChild(n: number): Measurement | undefined {
  const child = spawnSync(process.execPath, [...process.execArgv, process.argv[1]!], {
    env: { ...process.env, LOAD_CHILD: String(n) },
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
    maxBuffer: 16 * MB,
  });
  const line = child.stdout.split('\n').find((l) => l.startsWith(RESULT_TAG));
  if (line === undefined) {
    // Crashed (out of memory, a throw) before reporting: show what it printed.
    console.error(`LOAD FAILED: the ${n}-call child exited with ${child.status ?? child.signal} and no result`);
    process.stdout.write(child.stdout);
    return undefined;
  }
  return JSON.parse(line.slice(RESULT_TAG.length)) as Measurement; // a failed check has ok: false
}

function main(): void {
  const sourceLabel =
    SOURCE === 'burst'
      ? 'synchronous burst source (not model streaming: queues everything)'
      : `model-like stream (chunks of 1–${MAX_CHUNK}, a macrotask between, ≤ ${LEAD} in flight)`;
  printHeader(
    `load: ${SIZES.map((n) => n.toLocaleString('en-US')).join(' and ')} calls, one subscription each, concurrency ${CONCURRENCY}, ` +
      `${EXCLUSIVE_SHARE * 100}% exclusive, bodies sync / async / promise chain / setImmediate; ${sourceLabel}`,
  );
  if (!(globalThis as { gc?: unknown }).gc) console.log('(no --expose-gc: heap figures are not after GC)');

  const measured: Measurement[] = [];
  let ok = true;
  for (const n of SIZES) {
    const m = runChild(n);
    if (m === undefined) {
      ok = false;
      continue;
    }
    if (!m.ok) {
      console.error(`CHECK FAILED (${n} calls): ${m.failure}`);
      ok = false;
    }
    measured.push(m);
  }

  console.table(
    measured.map((m) => ({
      calls: m.n.toLocaleString('en-US'),
      'time s': fmt(m.ms / 1000, 2),
      'calls/s': Math.round((m.n / m.ms) * 1000).toLocaleString('en-US'),
      'max in flight': m.maxInFlight,
      'in order, all ok': m.ok ? 'yes' : 'NO',
    })),
  );
  console.table(
    measured.map((m) => ({
      calls: m.n.toLocaleString('en-US'),
      'RSS before MB': fmt(m.rssBeforeMb),
      'peak RSS MB': fmt(m.peakRssMb),
      'kernel maxRSS MB': fmt(m.maxRssMb),
      'heap before MB': fmt(m.heapBeforeMb),
      'heap mid MB': fmt(m.heapMidMb),
      'heap all-in MB': fmt(m.heapLastInMb),
      'heap after MB': fmt(m.heapAfterMb),
      'retained B/call': fmt(((m.heapLastInMb - m.heapBeforeMb) * MB) / m.n, 0),
    })),
  );
  console.log(
    'heap = heapUsed after gc(): before the run; mid = when N/2 results are out; all-in = when the N-th call is taken in ' +
      '(source not yet complete, all per-subscription state live); after = after completion. ' +
      'retained B/call = (all-in − before) / N',
  );

  if (SOURCE !== 'burst') {
    for (const m of measured) {
      const verdict = m.peakRssMb <= TARGET_PEAK_MB ? 'meets' : 'MISSES';
      console.log(`peak RSS ${m.n.toLocaleString('en-US')}: ${fmt(m.peakRssMb)} MB (target ≤ ${TARGET_PEAK_MB} MB: ${verdict})`);
    }
    const small = measured.find((m) => m.n === 100_000);
    const large = measured.find((m) => m.n === 1_000_000);
    if (small && large) {
      const ratio = (label: string, a: number, b: number) => {
        const r = b / a;
        console.log(`${label} 1M / 100k: ${fmt(r, 2)} (target ≤ ${fmt(TARGET_GROWTH, 2)}: ${r <= TARGET_GROWTH ? 'meets' : 'MISSES'})`);
      };
      ratio('peak RSS', small.peakRssMb, large.peakRssMb);
      ratio('heap after GC, mid-run', small.heapMidMb, large.heapMidMb);
      ratio('heap after GC, all calls in', small.heapLastInMb, large.heapLastInMb);
    }
  }
  console.log('targets are informational, not asserted');
  console.log(`sanity: every size returned N ok results in input order: ${ok ? 'yes' : 'NO'}`);
  if (!ok) process.exitCode = 1;
}

const childSize = process.env['LOAD_CHILD'];
if (childSize !== undefined) {
  const m = await measure(Number(childSize));
  process.stdout.write(RESULT_TAG + JSON.stringify(m) + '\n');
  if (!m.ok) process.exitCode = 1;
} else {
  main();
}
