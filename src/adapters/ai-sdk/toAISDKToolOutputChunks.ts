import type { UIMessageChunk } from 'ai';
import type { ToolResult } from '../../types/toolResult.js';

/**
 * The UI message stream chunks that complete the tool parts `useChat` shows, one per result, in the
 * order given: `{ type: 'tool-output-available', toolCallId, output: content }` for an `ok` result, and
 * `{ type: 'tool-output-error', toolCallId, errorText: content }` for every other (errors,
 * cancellations, denials: the text says which). With `execute` on the server the AI SDK writes these
 * itself; when toolstream runs the tools, write them into the stream after the step's own chunks
 * (which carry the calls' inputs), and the parts move from `input-available` to `output-available` /
 * `output-error`.
 *
 * Each output is the result's `content`, the model-facing text: `convertToModelMessages` turns the
 * parts back into the tool results the model reads on the next request, so it reads what the pipeline
 * decided (after post-execute policies and budgets), as with {@link toAISDKToolMessage}. A denial shows
 * as an error part: useChat's `output-denied` state carries no reason, and the model would read
 * "Tool call execution denied." instead of why. Results of calls the stream cut off
 * (`incomplete_args`) are left out, as the step holds no complete call for them.
 *
 * @param results - The results of one step, e.g. `(await runAISDKTurn(pipeline, result)).results`.
 * @returns Fresh chunks for `writer.write(...)` (`createUIMessageStream`).
 *
 * @example
 * ```ts
 * const turn = await runAISDKTurn(pipeline, result);
 * for (const chunk of toAISDKToolOutputChunks(turn.results)) writer.write(chunk);
 * // { type: 'tool-output-available', toolCallId: 'call_1', output: '- TODO: write tests …' }
 * ```
 */
export function toAISDKToolOutputChunks(results: readonly ToolResult[]): UIMessageChunk[] {
  return results
    .filter((result) => result.error?.code !== 'incomplete_args')
    .map(
      (result): UIMessageChunk =>
        result.status === 'ok'
          ? { type: 'tool-output-available', toolCallId: result.id, output: result.content }
          : { type: 'tool-output-error', toolCallId: result.id, errorText: result.content },
    );
}
