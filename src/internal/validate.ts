/** A timer length: positive and finite (to have no limit, leave the option out). */
export function isPositiveDuration(value: unknown): value is number {
  return typeof value === 'number' && value > 0 && Number.isFinite(value);
}
