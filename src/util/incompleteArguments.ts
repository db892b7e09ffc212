import { brand } from './brand.js';

/**
 * Marks a call whose arguments never arrived whole: the model's output was cut off (`max_tokens`), or
 * its stream broke midway. Stream adapters emit such a call as `{ id, name, args: new
 * IncompleteArguments(...) }` so it still gets a result — an `incomplete_args` error telling the model
 * to send the call again — and never runs.
 *
 * @example
 * ```ts
 * subscriber.next({ id, name, args: new IncompleteArguments('max_tokens', '{"path": "src/ind') });
 * ```
 */
export class IncompleteArguments {
  static {
    brand(this, 'IncompleteArguments'); // recognised by the intake of another build (ESM core, CJS adapter)
  }

  constructor(
    /** Why they are incomplete, e.g. `'max_tokens'` or `'stream_error'`. */
    readonly reason: string,
    /** The argument text received before the cut, for logs; never parsed. */
    readonly partialText: string,
  ) {}
}
