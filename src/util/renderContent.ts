/**
 * The model-facing text of a value: strings as they are, `undefined` as empty, streamed items joined
 * (strings concatenated, anything else one JSON line per item), everything else as JSON.
 *
 * @throws {TypeError} for values without a JSON form (BigInt, functions, symbols, cycles).
 */
export function renderValue(value: unknown, streamed: boolean): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  // What JSON.stringify writes for these, without its generic path (this runs once per call).
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (streamed) return renderItems(value as readonly unknown[]);
  const json = JSON.stringify(value);
  if (json === undefined) throw new TypeError(`a ${typeof value} has no JSON form`);
  return json;
}

/** Streamed items as text; never throws (an item without a JSON form renders as a placeholder). */
export function renderItems(items: readonly unknown[]): string {
  if (items.every((item) => typeof item === 'string')) return items.join('');
  return items
    .map((item) => {
      try {
        return renderValue(item, false);
      } catch {
        return `[unrenderable ${typeof item}]`;
      }
    })
    .join('\n');
}
