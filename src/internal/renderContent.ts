import type { CallRecord } from './callRecord.js';
import { describeError } from './describe.js';

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

/**
 * Renders a finished record's model-facing text once and stores it: the value of an `ok` record (one
 * that cannot be rendered becomes an `invalid_output` error), else the error message, led by the partial
 * output of a stream that failed midway.
 */
export function renderRecordContent(record: CallRecord): string {
  if (record.content !== undefined) return record.content;
  if (record.status === 'ok') {
    try {
      const render = record.streamed ? undefined : record.tool?.render;
      const text = render === undefined ? renderValue(record.value, record.streamed) : checkRendered(render(record.value));
      const omittedItems = record.omitted?.items ?? 0;
      return (record.content = omittedItems > 0 ? `${text}\n[... ${omittedItems} more items omitted]` : text);
    } catch (error) {
      const message = `Tool "${record.name}" returned a value that cannot be sent to the model: ${describeError(error)}`;
      record.value = undefined;
      record.fail('error', { code: 'invalid_output', message });
      return (record.content = message);
    }
  }
  const { error, partial } = record;
  return (record.content =
    partial !== undefined && partial.length > 0
      ? `${renderItems(partial)}\n[output incomplete] ${error!.message}`
      : error!.message);
}

function checkRendered(text: unknown): string {
  if (typeof text !== 'string') throw new TypeError(`render() returned a ${typeof text}, not a string`);
  return text;
}
