import { beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { fromAnthropicStream, type AnthropicStreamEvent } from '../../../src/adapters/anthropic/index.js';
import { createPipeline, defineTool, type ToolCall } from '../../../src/index.js';
import { ev, label, message, ran, settle, slowly, toolUse, weather } from './helpers.js';
import { withoutTurn } from '../withoutTurn.js';

const LONDON = ['{"location": "London, UK", ', '"units": "celsius"}'];
const londonCall: ToolCall = { id: 'toolu_a', name: 'weather', args: LONDON.join('') };

/** Which shell commands ran (reset in beforeEach). */
const shellRan: string[] = [];
const shell = defineTool({
  name: 'shell',
  description: 'Run a shell command',
  input: z.object({ command: z.string() }),
  execute: ({ command }) => {
    shellRan.push(command);
    return 'done';
  },
});
const rm = (index: number, id: string) => toolUse(index, id, 'shell', ['{"command": "rm -rf ~/late"}']);

beforeEach(() => {
  ran.length = 0;
  shellRan.length = 0;
});

describe('fromAnthropicStream: only calls of the message being streamed', () => {
  it('a tool_use after message_stop, with no new message_start, is nobody’s call: never emitted, never run', async () => {
    const events = [...message([...toolUse(0, 'toolu_a', 'weather', LONDON)]), ...rm(1, 'toolu_late'), ev.messageDelta('tool_use')];
    expect(await settle(fromAnthropicStream(slowly(events)))).toEqual({ values: [londonCall], error: undefined, completed: true });

    const results = await createPipeline({ tools: [weather, shell] }).run(fromAnthropicStream(slowly(events)));
    expect(results.map((r) => [r.id, r.status])).toEqual([['toolu_a', 'ok']]);
    expect(shellRan).toEqual([]);
  });

  it('so is one before the first message_start', async () => {
    const events = [...rm(0, 'toolu_early'), ...message([...toolUse(0, 'toolu_a', 'weather', LONDON)])];
    expect((await settle(fromAnthropicStream(slowly(events)))).values).toEqual([londonCall]);
  });

  it('a late block left open is not cut off as a call either', async () => {
    const events = [...message([...toolUse(0, 'toolu_a', 'weather', LONDON)]), ev.toolStart(1, 'toolu_late', 'shell'), ev.json(1, '{"command": "rm')];
    expect((await settle(fromAnthropicStream(slowly(events)))).values).toEqual([londonCall]);
  });

  it('a new message_start opens the next message: its calls run', async () => {
    const events = [...message([...toolUse(0, 'toolu_a', 'weather', LONDON)]), ...message([...toolUse(0, 'toolu_b', 'weather', LONDON)])];
    const { values } = await settle(fromAnthropicStream(slowly(events)));
    expect(values.map((call) => call.id)).toEqual(['toolu_a', 'toolu_b']);
  });
});

describe('fromAnthropicStream: programmatic tool calling (tool_use inside message_start)', () => {
  /** A continuation turn as the API sends it: the call whole in `message_start`, then the stop. */
  const continuation = (content: unknown[], stopReason: string | null = 'tool_use'): AnthropicStreamEvent[] => [
    {
      type: 'message_start',
      message: { id: 'msg_2', type: 'message', role: 'assistant', model: 'claude-test', content, stop_reason: stopReason, stop_sequence: null },
    } as unknown as AnthropicStreamEvent,
    ev.messageStop(),
  ];
  const caller = { type: 'code_execution_20250825', tool_id: 'srvtoolu_1' };
  const rollDie = { type: 'tool_use', id: 'toolu_roll', name: 'weather', input: { location: 'Paris, France', units: 'celsius' }, caller };

  it('emits each complete tool_use of message_start.message.content at that event, with its input as sent', async () => {
    const seen: string[] = [];
    const source = (async function* () {
      for (const event of continuation([rollDie])) {
        seen.push(label(event));
        yield event;
      }
    })();
    const values: ToolCall[] = [];
    await new Promise<void>((resolve, reject) =>
      fromAnthropicStream(source).subscribe({ next: (call) => (seen.push(`call ${call.id}`), values.push(call)), error: reject, complete: resolve }),
    );
    expect(values.map(withoutTurn)).toEqual([{ id: 'toolu_roll', name: 'weather', args: rollDie.input }]);
    expect(seen).toEqual(['message_start', 'call toolu_roll', 'message_stop']);
  });

  it('runs it through a pipeline, and ignores the other blocks message_start holds', async () => {
    const server = { type: 'server_tool_use', id: 'srvtoolu_1', name: 'code_execution', input: { code: 'x' } };
    const text = { type: 'text', text: 'Rolling.' };
    const results = await createPipeline({ tools: [weather] }).run(fromAnthropicStream(slowly(continuation([text, server, rollDie]))));
    expect(results.map((r) => [r.id, r.status, r.content])).toEqual([['toolu_roll', 'ok', 'Paris, France: 18 °C']]);
    expect(ran).toEqual(['Paris, France']);
  });

  it('a malformed tool_use in message_start still gets a result from the pipeline, and nothing runs', async () => {
    const broken = { type: 'tool_use', id: 'toolu_bad', name: 'weather', input: { location: 42 } };
    const results = await createPipeline({ tools: [weather] }).run(fromAnthropicStream(slowly(continuation([broken]))));
    expect(results.map((r) => [r.id, r.status, r.error?.code])).toEqual([['toolu_bad', 'error', 'invalid_args']]);
    expect(ran).toEqual([]);
  });
});
