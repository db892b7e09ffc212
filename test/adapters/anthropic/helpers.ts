import { lastValueFrom, materialize, toArray, type Observable } from 'rxjs';
import { z } from 'zod';
import { defineTool } from '../../../src/index.js';
import type { AnthropicStreamEvent } from '../../../src/adapters/anthropic/index.js';
import { withoutTurn } from '../withoutTurn.js';

/**
 * Hand-built stream events for rule cases. Only the fields the adapter reads are filled in (the SDK's
 * types also require usage and other bookkeeping), hence the casts.
 */
const event = (value: Record<string, unknown>) => value as unknown as AnthropicStreamEvent;

export const ev = {
  messageStart: () =>
    event({
      type: 'message_start',
      message: { id: 'msg_test', type: 'message', role: 'assistant', model: 'claude-test', content: [], stop_reason: null, stop_sequence: null },
    }),
  textStart: (index: number) => event({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } }),
  text: (index: number, text: string) => event({ type: 'content_block_delta', index, delta: { type: 'text_delta', text } }),
  toolStart: (index: number, id: string, name: string, input: unknown = {}) =>
    event({ type: 'content_block_start', index, content_block: { type: 'tool_use', id, name, input } }),
  serverToolStart: (index: number, id: string, name: string) =>
    event({ type: 'content_block_start', index, content_block: { type: 'server_tool_use', id, name, input: {} } }),
  json: (index: number, partial_json: string) => event({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } }),
  stop: (index: number) => event({ type: 'content_block_stop', index }),
  messageDelta: (stop_reason: string | null) => event({ type: 'message_delta', delta: { stop_reason, stop_sequence: null }, usage: { output_tokens: 1 } }),
  messageStop: () => event({ type: 'message_stop' }),
  ping: (): AnthropicStreamEvent => ({ type: 'ping' }),
  error: (type: string, message: string): AnthropicStreamEvent => event({ type: 'error', error: { type, message }, request_id: null }),
};

/** A complete `tool_use` block: start, one delta per fragment, stop. */
export const toolUse = (index: number, id: string, name: string, fragments: readonly string[]): AnthropicStreamEvent[] => [
  ev.toolStart(index, id, name),
  ...fragments.map((fragment) => ev.json(index, fragment)),
  ev.stop(index),
];

/** A whole message: start, the blocks, the stop reason, stop. */
export const message = (blocks: readonly AnthropicStreamEvent[], stopReason = 'tool_use'): AnthropicStreamEvent[] => [
  ev.messageStart(),
  ...blocks,
  ev.messageDelta(stopReason),
  ev.messageStop(),
];

/** The events as an async generator that yields to the event loop between them, as a network stream would. */
export async function* slowly<T>(events: readonly T[]): AsyncGenerator<T> {
  for (const item of events) {
    await new Promise((resolve) => setImmediate(resolve));
    yield item;
  }
}

/** A short label for an event, for order logs: `content_block_stop 1`, `message_stop`. */
export const label = (item: AnthropicStreamEvent) => {
  const index = (item as { index?: unknown }).index;
  return typeof index === 'number' ? `${item.type} ${index}` : item.type;
};

/** Every notification of an Observable: its values, then how it ended. */
export async function settle<T>(source: Observable<T>): Promise<{ values: T[]; error: unknown; completed: boolean }> {
  const notifications = await lastValueFrom(source.pipe(materialize(), toArray()));
  const values: T[] = [];
  let error: unknown;
  let completed = false;
  for (const n of notifications) {
    if (n.kind === 'N') values.push(withoutTurn(n.value)); // the turn is pinned in turns.test.ts
    else if (n.kind === 'E') error = n.error;
    else completed = true;
  }
  return { values, error, completed };
}

export const TEMPERATURES: Readonly<Record<string, number>> = { 'London, UK': 15, 'Paris, France': 18 };

/** Which weather bodies ran, in order (reset it in beforeEach). */
export const ran: string[] = [];

/** The tool the recorded fixture calls: `weather({ location, units })`. */
export const weather = defineTool({
  name: 'weather',
  description: 'The current weather in a city',
  input: z.object({
    location: z.string().describe('City and country, e.g. "London, UK"'),
    units: z.enum(['celsius', 'fahrenheit']),
  }),
  mode: 'parallel',
  execute: ({ location, units }) => {
    ran.push(location);
    const celsius = TEMPERATURES[location] ?? 20;
    return units === 'celsius' ? `${location}: ${celsius} °C` : `${location}: ${Math.round(celsius * 1.8 + 32)} °F`;
  },
});

/** A tool without arguments. */
export const now = defineTool({
  name: 'now',
  description: 'The current time',
  input: z.object({}),
  mode: 'parallel',
  execute: () => {
    ran.push('now');
    return '12:00';
  },
});
