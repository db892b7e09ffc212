import fc from 'fast-check';
import { insertAt, type ModelStream, type StreamMode } from './modelStream.js';

/**
 * What breaks a stream in `'hostile'` mode, in the order it is applied: a stretch of events replayed
 * later (a call sent again under its id), neighbours swapped, junk inserted, the rest cut off, and an
 * ending put after the cut (an error event, the model stopping at its token limit).
 */
interface Damage<E> {
  readonly replay: readonly [number, number, number] | null;
  readonly swaps: readonly number[];
  readonly junk: readonly { readonly at: number; readonly item: E }[];
  readonly cut: number | null;
  readonly ending: readonly E[] | null;
}

/** How one provider's streams break: its junk events and its endings (an error event, a stop at the token limit). */
export interface Breakage<E> {
  readonly junk: fc.Arbitrary<E>;
  readonly endings: fc.Arbitrary<readonly E[]>;
}

/**
 * The streams of `whole` in `mode`: as they are, or (`'hostile'`) broken; `renumber` gives the broken
 * events their order numbers again, for formats that have them.
 */
export function inMode<E>(mode: StreamMode, whole: fc.Arbitrary<ModelStream<E>>, breakage: Breakage<E>, renumber: (events: E[]) => E[] = (events) => events): fc.Arbitrary<ModelStream<E>> {
  if (mode !== 'hostile') return whole.map((stream) => ({ ...stream, mode }));
  return whole.chain((stream) => broken(stream.events, breakage).map((events) => ({ ...stream, mode, events: renumber(events) })));
}

/**
 * `events` broken by at least one kind of damage. Where events were cut, `ending` follows the cut;
 * with no cut, an ending replaces nothing and is appended.
 */
function broken<E>(events: readonly E[], breakage: Breakage<E>): fc.Arbitrary<E[]> {
  const damage: fc.Arbitrary<Damage<E>> = fc
    .record({
      replay: fc.option(fc.tuple(fc.nat(), fc.nat({ max: 12 }), fc.nat())),
      swaps: fc.array(fc.nat(), { maxLength: 2 }),
      junk: fc.array(fc.record({ at: fc.nat(), item: breakage.junk }), { maxLength: 4 }),
      cut: fc.option(fc.nat()),
      ending: fc.option(breakage.endings),
    })
    .filter((d) => d.replay !== null || d.swaps.length > 0 || d.junk.length > 0 || d.cut !== null || d.ending !== null);
  return damage.map((d) => damaged(events, d));
}

function damaged<E>(events: readonly E[], damage: Damage<E>): E[] {
  let out = [...events];
  if (damage.replay !== null && out.length > 0) {
    const [from, length, to] = damage.replay;
    const start = from % out.length;
    const end = Math.min(out.length, start + length + 1);
    const position = end + (to % (out.length - end + 1));
    out = [...out.slice(0, position), ...out.slice(start, end), ...out.slice(position)];
  }
  for (const at of damage.swaps) {
    if (out.length < 2) break;
    const i = at % (out.length - 1);
    [out[i], out[i + 1]] = [out[i + 1]!, out[i]!];
  }
  out = insertAt(out, damage.junk);
  if (damage.cut !== null) out = out.slice(0, damage.cut % (out.length + 1));
  if (damage.ending !== null) out.push(...damage.ending);
  return out;
}
