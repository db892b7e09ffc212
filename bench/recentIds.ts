/**
 * The duplicate-id window alone (issue 25, item 5): `RecentIds`, two generations of `Set`s, against
 * the structure it replaced — one `Set` of the last 10,000 ids and a queue of their order, one id
 * forgotten per new one — in the same process, so the ratio holds on a loaded machine where the µs
 * do not. Per run: a fresh window (intake makes one per subscription) and 100k new ids `'c' + i`, as
 * `overhead.ts` sends; with `busy`, a small object kept per id, as a batch keeps its results, so the
 * tables are probed from a heap that is not all theirs. Rounds interleaved, their order alternated.
 *
 * Run: `npx tsup --config bench/tsup.config.ts && node --expose-gc .bench/recentIds.js`
 * (`RECENT_IDS_ROUNDS=<n>`, default 21).
 */
import { Fifo } from '../src/util/fifo.js';
import { RecentIds } from '../src/util/recentIds.js';
import { collectGarbage, fmt, median, printHeader } from './common.js';

/** The window before issue 25 (src/internal/recentIds.ts at a7bc167), kept as the baseline. */
class SetAndQueue {
  private readonly ids = new Set<string>();
  private readonly order = new Fifo<string>();

  constructor(private readonly capacity: number) {}

  add(id: string): boolean {
    if (this.ids.has(id)) return false;
    this.ids.add(id);
    this.order.push(id);
    if (this.order.length > this.capacity) this.ids.delete(this.order.shift()!);
    return true;
  }
}

const N = 100_000;
const WINDOW = 10_000;
const WARMUP = 3;
const ROUNDS = Number(process.env['RECENT_IDS_ROUNDS'] ?? 21);
const ids = Array.from({ length: N }, (_, i) => 'c' + i);
const windows = { 'two generations (RecentIds)': RecentIds, 'one Set + queue of the order (before)': SetAndQueue } as const;
type WindowName = keyof typeof windows;
const names = Object.keys(windows) as WindowName[];

function run(name: WindowName, busy: boolean): number {
  const window = new windows[name](WINDOW);
  const kept: { readonly i: number }[] = [];
  const start = performance.now();
  for (let i = 0; i < N; i++) {
    if (!window.add(ids[i]!)) throw new Error(`${name}: a new id was refused`);
    if (busy) kept.push({ i });
  }
  const ms = performance.now() - start;
  if (busy && kept.length !== N) throw new Error('unreachable');
  return ms;
}

printHeader(`duplicate-id window: ${N / 1000}k new ids a run, window ${WINDOW}, ${WARMUP} warm-up + ${ROUNDS} measured rounds`);
const rows = [];
for (const busy of [false, true]) {
  const times = new Map<WindowName, number[]>(names.map((name) => [name, []]));
  for (let round = 0; round < WARMUP + ROUNDS; round++) {
    for (const name of round % 2 === 0 ? names : [...names].reverse()) {
      collectGarbage();
      const ms = run(name, busy);
      if (round >= WARMUP) times.get(name)!.push(ms);
    }
  }
  const before = median(times.get('one Set + queue of the order (before)')!);
  for (const name of names) {
    const ms = median(times.get(name)!);
    rows.push({ heap: busy ? 'busy' : 'bare', window: name, 'median ms': fmt(ms, 2), 'ns/id': fmt((ms * 1e6) / N), '× before': fmt(ms / before, 2) });
  }
}
console.table(rows);
