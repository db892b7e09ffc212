import type { TextStreamPart, ToolSet } from 'ai';
import { describe, expect, it } from 'vitest';
import { fromAISDKStream } from '../../../src/adapters/ai-sdk/index.js';
import { createPipeline } from '../../../src/index.js';
import { finish, modelOf, recordingTools, sdkToolsOf, streamStep, type ModelPart } from './helpers.js';

// Some providers number their calls per response (Kimi K2 sends `functions.add:0` in every response),
// so a later step may reuse an earlier step's id. That call must get a result, never vanish.

/** One real `streamText` step whose model makes these calls of `add`. */
function step(calls: readonly { readonly id: string; readonly a: number }[], tools: ToolSet) {
  const parts: ModelPart[] = [
    { type: 'stream-start', warnings: [] },
    ...calls.map(({ id, a }): ModelPart => ({ type: 'tool-call', toolCallId: id, toolName: 'add', input: JSON.stringify({ a, b: 1 }) })),
    finish('tool-calls'),
  ];
  return streamStep(modelOf(parts), tools);
}

/** The full streams of the steps, one after the other: one source holding several steps. */
async function* steps(...fullStreams: AsyncIterable<TextStreamPart<ToolSet>>[]): AsyncGenerator<TextStreamPart<ToolSet>> {
  for (const parts of fullStreams) yield* parts;
}

describe('fromAISDKStream: a call id is answered once per step, and a reused one across steps', () => {
  it('a later step that reuses an earlier step\'s id: its call gets a duplicate_id result, not silence', async () => {
    const { tools, events } = recordingTools();
    const sdkTools = sdkToolsOf(tools);
    const first = step([{ id: 'functions.add:0', a: 1 }], sdkTools);
    const second = step([{ id: 'functions.add:0', a: 2 }, { id: 'functions.add:1', a: 3 }], sdkTools);

    const results = await createPipeline({ tools: [...tools] }).run(fromAISDKStream(steps(first.fullStream, second.fullStream)));

    expect(results.map((r) => [r.id, r.status, r.error?.code])).toEqual([
      ['functions.add:0', 'ok', undefined],
      ['functions.add:0', 'error', 'duplicate_id'],
      ['functions.add:1', 'ok', undefined],
    ]);
    expect(results[0]!.turn).not.toBe(results[1]!.turn); // two steps: two turns
    expect(events).toEqual(['body:functions.add:0:start', 'body:functions.add:1:start']);
  });

  it('the same tool-call part twice in one step is one call: run once, answered once', async () => {
    const { tools, events } = recordingTools();
    const twice = step([{ id: 'call_1', a: 1 }, { id: 'call_1', a: 1 }], sdkToolsOf(tools));
    const results = await createPipeline({ tools: [...tools] }).run(fromAISDKStream(twice.fullStream));
    expect(results.map((r) => [r.id, r.status, r.value])).toEqual([['call_1', 'ok', 2]]);
    expect(events).toEqual(['body:call_1:start']);
  });

  it('each step alone, as runAISDKTurn runs them: the reused id runs in its own turn', async () => {
    const { tools, events } = recordingTools();
    const sdkTools = sdkToolsOf(tools);
    const pipeline = createPipeline({ tools: [...tools] });
    const first = await pipeline.run(fromAISDKStream(step([{ id: 'functions.add:0', a: 1 }], sdkTools).fullStream));
    const second = await pipeline.run(fromAISDKStream(step([{ id: 'functions.add:0', a: 2 }], sdkTools).fullStream));
    expect([...first, ...second].map((r) => [r.id, r.status, r.value])).toEqual([
      ['functions.add:0', 'ok', 2],
      ['functions.add:0', 'ok', 3],
    ]);
    expect(events).toHaveLength(2);
  });
});
