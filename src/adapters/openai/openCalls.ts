/** What an open call is found by: its `call_id`, its item `id` (when it has one), its `output_index`. */
export interface CallKeys {
  readonly callId: string;
  readonly itemId: string | undefined;
  readonly outputIndex: number | undefined;
}

/**
 * The calls of a Responses stream whose arguments are still arriving, found by call id, item id or
 * output index in constant time, so a response with many calls open at once costs linear time (a
 * list scanned and copied per event made it quadratic: 20k open calls took 8.7 s). Internal.
 *
 * @example
 * ```ts
 * const open = new OpenCalls<OpenCall>();
 * open.add({ callId: 'call_1', itemId: 'fc_1', outputIndex: 0, args: '' });
 * open.find('fc_1', 0)?.callId; // 'call_1'
 * ```
 */
export class OpenCalls<C extends CallKeys> {
  /** Every open call by `call_id`, in the order they were added. */
  readonly #byCallId = new Map<string, C>();
  /** The open calls with each item id, and at each output index, in the order they were added (one, on any sane stream). */
  readonly #byItemId = new MultiMap<string, C>();
  readonly #byOutputIndex = new MultiMap<number, C>();

  get size(): number {
    return this.#byCallId.size;
  }

  has(callId: string): boolean {
    return this.#byCallId.has(callId);
  }

  get(callId: string): C | undefined {
    return this.#byCallId.get(callId);
  }

  /** Adds a call whose `call_id` is not open yet. */
  add(call: C): void {
    this.#byCallId.set(call.callId, call);
    if (call.itemId !== undefined) this.#byItemId.add(call.itemId, call);
    if (call.outputIndex !== undefined) this.#byOutputIndex.add(call.outputIndex, call);
  }

  /**
   * The open call an event is about: the first one with the event's item id; else, by output index,
   * the first call there — one without an item id when the event has one (two item ids that differ
   * never match).
   */
  find(itemId: string | undefined, outputIndex: unknown): C | undefined {
    const byId = itemId === undefined ? undefined : this.#byItemId.first(itemId);
    if (byId !== undefined || typeof outputIndex !== 'number') return byId;
    const atIndex = this.#byOutputIndex.all(outputIndex);
    return itemId === undefined ? atIndex[0] : atIndex.find((call) => call.itemId === undefined);
  }

  delete(call: C): void {
    if (this.#byCallId.get(call.callId) !== call) return;
    this.#byCallId.delete(call.callId);
    if (call.itemId !== undefined) this.#byItemId.remove(call.itemId, call);
    if (call.outputIndex !== undefined) this.#byOutputIndex.remove(call.outputIndex, call);
  }

  /** The open calls, in the order they were added (a copy: closing them while iterating is fine). */
  list(): C[] {
    return [...this.#byCallId.values()];
  }
}

/**
 * Values by key, several per key, in the order they were added. A key holds its one value itself and
 * an array only once a second value shares it (never, on a sane stream), so nothing is allocated per
 * call beyond the map entry.
 */
class MultiMap<K, V extends object> {
  readonly #map = new Map<K, V | V[]>();

  add(key: K, value: V): void {
    const held = this.#map.get(key);
    if (held === undefined) this.#map.set(key, value);
    else if (Array.isArray(held)) held.push(value);
    else this.#map.set(key, [held, value]);
  }

  first(key: K): V | undefined {
    const held = this.#map.get(key);
    return Array.isArray(held) ? held[0] : held;
  }

  all(key: K): readonly V[] {
    const held = this.#map.get(key);
    return held === undefined ? [] : Array.isArray(held) ? held : [held];
  }

  remove(key: K, value: V): void {
    const held = this.#map.get(key);
    if (held === value) {
      this.#map.delete(key);
    } else if (Array.isArray(held)) {
      const at = held.indexOf(value);
      if (at !== -1) held.splice(at, 1);
      if (held.length === 1) this.#map.set(key, held[0]!);
    }
  }
}
