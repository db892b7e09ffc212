import type { UIMessageChunk } from 'ai';
import type { ToolResult } from '../../types/toolResult.js';
import { toAISDKApprovalRequests } from './aisdkApprovals.js';

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
 * A suspended call of a durable turn has no output yet. One that waits for a human's approval gets
 * the SDK's own approval chunk, `{ type: 'tool-approval-request', approvalId, toolCallId }` (the
 * approval id is its signed token, see {@link toAISDKApprovalRequests}): the part moves to
 * `approval-requested`, and `useChat`'s `addToolApprovalResponse({ id: part.approval.id, approved })`
 * answers it as it answers a tool with `needsApproval`. A call that only waits behind another gets no
 * chunk: its part stays `input-available` until the resumed turn writes its output. A call a human
 * rejected (`approval_rejected`) gets `{ type: 'tool-output-denied', toolCallId }`, as the SDK writes it
 * for a refused `needsApproval`: the part moves to `output-denied`.
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
  return results.flatMap((result): UIMessageChunk[] => {
    if (result.error?.code === 'incomplete_args') return [];
    if (result.status === 'suspended') return toAISDKApprovalRequests([result]);
    if (result.error?.code === 'approval_rejected') return [{ type: 'tool-output-denied', toolCallId: result.id }];
    return [
      result.status === 'ok'
        ? { type: 'tool-output-available', toolCallId: result.id, output: result.content }
        : { type: 'tool-output-error', toolCallId: result.id, errorText: result.content },
    ];
  });
}
