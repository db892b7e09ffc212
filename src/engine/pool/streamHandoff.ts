/**
 * A body that learns only after an await whether its output is a value or a stream (a remote tool: the
 * worker's body decides) resolves its promise with `streamHandoff(items)`: the pool then collects
 * `items` as a streamed output (`streamed: true`, retention, `return()` on abort), as if the body had
 * returned the iterable itself. Internal and marked with a registered symbol, so a tool's ordinary value
 * can never be mistaken for one.
 */
const HANDOFF = Symbol.for('toolstream.streamHandoff');

export interface StreamHandoff {
  readonly [HANDOFF]: AsyncIterable<unknown>;
}

export function streamHandoff(items: AsyncIterable<unknown>): StreamHandoff {
  return Object.freeze({ [HANDOFF]: items });
}

/** The iterable a body handed off, or `undefined` for an ordinary value. */
export function handedOffStream(value: unknown): AsyncIterable<unknown> | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  try {
    return (value as Partial<StreamHandoff>)[HANDOFF];
  } catch {
    return undefined; // a hostile value (a Proxy whose get trap throws) is just a value
  }
}
