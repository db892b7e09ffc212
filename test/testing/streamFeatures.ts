import type { WireFormat } from '../../src/testing/index.js';

/**
 * What a stream shows, by format, for the corpus coverage test: the same reading of a recorded
 * response and of a generated one. Generic where it can be (every event type, block type, delta type,
 * item type, chunk, choice and delta field), and the shapes of tool-call fragments that the adapters
 * tell apart (how calls are indexed, cut, packed, finished and repeated).
 */
export function streamFeatures(format: WireFormat, events: readonly unknown[]): Set<string> {
  const found = new Set<string>();
  const records = events.filter(isRecord);
  if (format === 'anthropic') anthropicFeatures(records, found);
  else if (format === 'responses') responsesFeatures(records, found);
  else chatFeatures(records, found);
  return found;
}

function anthropicFeatures(events: readonly Record<string, unknown>[], found: Set<string>): void {
  for (const event of events) {
    found.add(`type:${String(event['type'])}`);
    const block = event['content_block'];
    if (isRecord(block)) {
      found.add(`block:${String(block['type'])}`);
      if (block['type'] === 'tool_use') for (const key of Object.keys(block)) found.add(`tool_use.${key}`);
    }
    const delta = event['delta'];
    if (isRecord(delta) && event['type'] === 'content_block_delta') found.add(`delta:${String(delta['type'])}`);
    if (isRecord(delta) && event['type'] === 'message_delta') found.add(`stop_reason:${String(delta['stop_reason'])}`);
    const message = event['message'];
    if (isRecord(message) && Array.isArray(message['content']) && message['content'].some((b) => isRecord(b) && b['type'] === 'tool_use')) {
      found.add('message_start carries tool_use');
    }
  }
}

function responsesFeatures(events: readonly Record<string, unknown>[], found: Set<string>): void {
  const streamedArgs = new Set<unknown>();
  const calls = new Set<unknown>();
  for (const event of events) {
    const type = String(event['type']);
    found.add(`type:${type}`);
    const item = event['item'];
    if (isRecord(item)) {
      found.add(`item:${String(item['type'])}`);
      if (item['type'] === 'function_call') {
        for (const key of Object.keys(item)) found.add(`function_call.${key}`);
        calls.add(item['id']);
        if (type === 'response.output_item.done') found.add(`function_call done status:${String(item['status'])}`);
      }
    }
    if (type === 'response.function_call_arguments.delta') {
      streamedArgs.add(event['item_id']);
      for (const key of Object.keys(event)) found.add(`arguments.delta.${key}`);
    }
  }
  if ([...calls].some((id) => !streamedArgs.has(id))) found.add('function_call without argument deltas');
}

function chatFeatures(chunks: readonly Record<string, unknown>[], found: Set<string>): void {
  let finishes = 0;
  const ids = new Set<string>();
  let first = true;
  for (const chunk of chunks) {
    for (const key of Object.keys(chunk)) found.add(`chunk.${key}`);
    if (!('id' in chunk)) found.add('chunk without id');
    const choices = chunk['choices'];
    if (Array.isArray(choices) && choices.length === 0) found.add('choices: []');
    for (const choice of Array.isArray(choices) ? choices.filter(isRecord) : []) {
      for (const key of Object.keys(choice)) found.add(`choice.${key}`);
      const finish = choice['finish_reason'];
      found.add(`finish:${'finish_reason' in choice ? String(finish) : 'absent'}`);
      if (typeof finish === 'string' && finish !== '') finishes++;
      const delta = choice['delta'];
      if (!isRecord(delta)) continue;
      for (const key of Object.keys(delta)) found.add(`delta.${key}`);
      const fragments = Array.isArray(delta['tool_calls']) ? delta['tool_calls'].filter(isRecord) : [];
      if (fragments.length > 1) found.add('several fragments in one chunk');
      if (fragments.length > 0 && typeof finish === 'string' && finish !== '') found.add('fragments and the finish in one chunk');
      for (const fragment of fragments) {
        const fn = isRecord(fragment['function']) ? fragment['function'] : {};
        found.add(`fragment:${Object.keys(fragment).sort().join(',')} fn:${Object.keys(fn).sort().join(',')}`);
        if (fn['arguments'] === null) found.add('arguments: null');
        if (fragment['id'] === '') found.add('fragment with id ""');
        if (first && typeof fragment['index'] === 'number') found.add(`first index ${fragment['index']}`);
        first = false;
        const id = fragment['id'];
        if (typeof id === 'string' && id !== '') {
          if (ids.has(id)) found.add('a call re-sent under its id');
          ids.add(id);
        }
      }
    }
  }
  if (ids.size > 0) found.add(finishes === 0 ? 'calls without a finish' : finishes > 1 ? 'finish sent more than once' : 'finish sent once');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
