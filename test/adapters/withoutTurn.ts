import { map, type OperatorFunction } from 'rxjs';

/**
 * A call without its `turn`: the adapter tests that pin which calls a stream holds (ids, names,
 * arguments) compare these, and `turns.test.ts` pins the turn each adapter sets, once per adapter.
 */
export function withoutTurn<T>(value: T): T {
  if (typeof value !== 'object' || value === null || !('turn' in value)) return value;
  const { turn: _turn, ...rest } = value as T & { turn?: unknown };
  return rest as T;
}

/** {@link withoutTurn} for every call an Observable emits. */
export const dropTurns = <T>(): OperatorFunction<T, T> => map(withoutTurn);
