/** The longest timer Node keeps: a longer one fires after 1 ms (with a TimeoutOverflowWarning). */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** A timer length: positive and at most `MAX_TIMER_MS` (about 24.8 days). */
export function isPositiveDuration(value: unknown): value is number {
  return typeof value === 'number' && value > 0 && value <= MAX_TIMER_MS;
}

/** A count limit: an integer of at least `min`, or `Infinity` for no limit. */
export function isCount(value: unknown, min: number): value is number {
  return value === Infinity || (Number.isInteger(value) && (value as number) >= min);
}

/** Any non-null object (arrays included), to read fields of untrusted input without a TypeError. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** A non-null object that is not an array: a JSON object (a schema, a map of schemas). */
export function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
