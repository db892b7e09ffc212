import { jsonSchema, streamText, tool, type ToolSet } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { defineTool, toolSchemas, type AnyTool } from '../../../src/index.js';

/** A part of a model's stream (the provider spec's `LanguageModelV3StreamPart`), taken from the mock. */
export type ModelPart =
  Awaited<ReturnType<MockLanguageModelV3['doStream']>>['stream'] extends ReadableStream<infer P> ? P : never;

export const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 20, text: 20, reasoning: 0 },
};

export const finish = (unified: 'stop' | 'length' | 'tool-calls' | 'error' | 'content-filter' | 'other'): ModelPart => ({
  type: 'finish',
  finishReason: { unified, raw: unified },
  usage,
});

/** A model that answers its n-th call with the n-th list of parts, and records the prompts it got. */
export function conversation(steps: readonly (readonly ModelPart[])[]) {
  const prompts: unknown[] = [];
  const model = new MockLanguageModelV3({
    doStream: async ({ prompt }) => {
      prompts.push(prompt);
      const parts = steps[prompts.length - 1] ?? [];
      return {
        stream: new ReadableStream<ModelPart>({
          start(controller) {
            for (const part of parts) controller.enqueue(part);
            controller.close();
          },
        }),
      };
    },
  });
  return { model, prompts };
}

/** A model call that returns these parts, then closes (or errors with `fail`). */
export function modelOf(parts: readonly ModelPart[]): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    doStream: async () => ({
      stream: new ReadableStream<ModelPart>({
        start(controller) {
          for (const part of parts) controller.enqueue(part);
          controller.close();
        },
      }),
    }),
  });
}

/**
 * A model whose stream is produced by `produce`, one part at a time, as the SDK pulls. Like a real
 * provider, it stops when the call's `abortSignal` aborts (the stream errors with the abort reason).
 */
export function scriptedModel(produce: () => AsyncGenerator<ModelPart>): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    doStream: async ({ abortSignal }) => {
      const parts = produce();
      return {
        stream: new ReadableStream<ModelPart>({
          start(controller) {
            abortSignal?.addEventListener(
              'abort',
              () => {
                controller.error(abortSignal.reason);
                void parts.return(undefined);
              },
              { once: true },
            );
          },
          async pull(controller) {
            const step = await parts.next();
            if (abortSignal?.aborted === true) return;
            if (step.done === true) controller.close();
            else controller.enqueue(step.value);
          },
          async cancel() {
            await parts.return(undefined);
          },
        }),
      };
    },
  });
}

/**
 * The pipeline's tools as the SDK is offered them: JSON Schemas from `toolSchemas`, no `execute` (the
 * recommended wiring: the SDK only parses, toolstream validates and runs).
 */
export function sdkToolsOf(tools: readonly AnyTool[]): ToolSet {
  return Object.fromEntries(
    toolSchemas(tools).map((t) => [t.name, tool({ description: t.description, inputSchema: jsonSchema(t.inputSchema) })]),
  );
}

/** Streams one `streamText` step of `model` with `tools` offered and no tool executed by the SDK. */
export function streamStep<TOOLS extends ToolSet>(model: MockLanguageModelV3, tools: TOOLS) {
  return streamText({ model, tools, prompt: 'Do the thing.', onError: () => undefined });
}

/** Tools that record what ran: `read_file` (parallel) and `add` (parallel). */
export function recordingTools(events: string[] = []) {
  const readFile = defineTool({
    name: 'read_file',
    description: 'Read a file',
    input: z.object({ path: z.string() }),
    mode: 'parallel',
    execute: async ({ path }, { callId }) => {
      events.push(`body:${callId}:start`);
      await new Promise((resolve) => setTimeout(resolve, 5));
      events.push(`body:${callId}:end`);
      return `contents of ${path}`;
    },
  });
  const add = defineTool({
    name: 'add',
    description: 'Add two numbers',
    input: z.object({ a: z.number(), b: z.number() }),
    mode: 'parallel',
    execute: ({ a, b }, { callId }) => {
      events.push(`body:${callId}:start`);
      return a + b;
    },
  });
  return { events, readFile, add, tools: [readFile, add] as const };
}

export async function collect<T>(source: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of source) items.push(item);
  return items;
}
