import type { CallRecord } from './records/callRecord.js';
import { describeError } from '../util/describe.js';
import { renderItems, renderValue } from '../util/renderContent.js';

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
