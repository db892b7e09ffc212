import { beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { fromAnthropicStream } from '../../../src/adapters/anthropic/index.js';
import { createPipeline, defineTool, type ToolCall } from '../../../src/index.js';
import { ev, message, ran, settle, slowly, toolUse, weather } from './helpers.js';

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
