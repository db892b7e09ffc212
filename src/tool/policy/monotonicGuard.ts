import { brand } from '../../util/brand.js';
import type { Decision } from '../../types/decision.js';

const STRICTNESS: Readonly<Record<Decision, number>> = { allow: 0, ask: 1, deny: 2 };

/**
 * The stricter of two decisions (`deny` > `ask` > `allow`).
 *
 * @example
 * ```ts
 * stricter('allow', 'ask'); // 'ask'
 * ```
 */
export function stricter(a: Decision, b: Decision): Decision {
  return STRICTNESS[a] >= STRICTNESS[b] ? a : b;
}

/**
 * An attempt to move a {@link MonotonicGuard} to a less strict decision. Returned by `update`, not
 * thrown: a relax attempt is an expected event to record, not a failure of the caller.
 *
 * @example
 * ```ts
 * const relaxed = guard.update('allow');
 * if (relaxed) console.warn(`${relaxed.from} → ${relaxed.to} refused`);
 * ```
 */
export class GuardRelaxedError extends Error {
  static {
    brand(this, 'GuardRelaxedError');
  }

  readonly code = 'guard_relaxed' as const;

  constructor(
    /** The decision the guard holds, and keeps. */
    readonly from: Decision,
    /** The less strict decision that was refused. */
    readonly to: Decision,
  ) {
    super(`a decision may only tighten: ${from} → ${to} refused`);
    this.name = 'GuardRelaxedError';
  }
}

/**
 * Folds decisions so they only ever tighten: strictness `deny` > `ask` > `allow`. The first update is
 * accepted as it is; later ones are accepted when at least as strict; a less strict one is refused
 * (returned as a {@link GuardRelaxedError}) and the stricter decision stays.
 *
 * The pipeline folds every decision its pre-execute policies return, as the waterfall unwinds, through
 * one guard per call: the final decision is never less strict than any decision a policy returned.
 *
 * @example
 * ```ts
 * const guard = new MonotonicGuard();
 * guard.update('ask');            // undefined: accepted
 * guard.update('allow');          // GuardRelaxedError: ask → allow refused
 * guard.update('deny');           // undefined: accepted
 * guard.decision;                 // 'deny'
 * ```
 */
export class MonotonicGuard {
  #decision: Decision | undefined;

  /** The decision so far; `undefined` before the first update. */
  get decision(): Decision | undefined {
    return this.#decision;
  }

  /** Fold in `next`. Returns the refusal when `next` would relax the decision, else `undefined`. */
  update(next: Decision): GuardRelaxedError | undefined {
    const current = this.#decision;
    if (current !== undefined && STRICTNESS[next] < STRICTNESS[current]) return new GuardRelaxedError(current, next);
    this.#decision = next;
    return undefined;
  }
}
