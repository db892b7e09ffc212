import type { ModelMessage, ToolApprovalRequest } from 'ai';
import type { ApprovalResponse, PendingApproval } from '../../types/pendingApproval.js';
import type { ToolResult } from '../../types/toolResult.js';

/** Each suspended call that waits for a human, with its pending approval, in the model's order (a call that only waits behind another has none). */
function pendingOf(results: readonly ToolResult[]): { readonly toolCallId: string; readonly approval: PendingApproval }[] {
  return results.flatMap((result) =>
    result.status === 'suspended' && result.error.code === 'approval_pending' ? [{ toolCallId: result.id, approval: result.error.approval }] : [],
  );
}

/**
 * The AI SDK's own approval parts for a step's suspended calls: `{ type: 'tool-approval-request',
 * approvalId, toolCallId }`, one per call that waits for a human, in the model's order. They go in the
 * step's assistant message, after its tool calls, as `streamText` puts them there for a tool with
 * `needsApproval`; `convertToModelMessages` writes the same parts from a page's `approval-requested`
 * tool parts, and the SDK drops them from what it sends a provider.
 *
 * The `approvalId` is toolstream's approval token: signed with the pipeline's `approvalSecret` (HMAC,
 * which never leaves the server) over the turn, the call, its admitted arguments and a nonce, with an
 * expiry. It holds no secret, so it is safe to hand to a browser; it cannot be altered nor made for
 * another call; and it answers its call once.
 *
 * @param results - A turn's results.
 * @returns Fresh parts; empty when no call waits for an approval.
 *
 * @example
 * ```ts
 * toAISDKApprovalRequests(results);
 * // [{ type: 'tool-approval-request', approvalId: 'eyJ0dXJuIjoi….3q1X…', toolCallId: 'call_5' }]
 * ```
 */
export function toAISDKApprovalRequests(results: readonly ToolResult[]): ToolApprovalRequest[] {
  return pendingOf(results).map(({ toolCallId, approval }) => ({ type: 'tool-approval-request', approvalId: approval.token, toolCallId }));
}

/**
 * The human's answers in a history, as `resume` takes them: every `tool-approval-response` part of the
 * tool messages that end the history after its last assistant message (`convertToModelMessages` writes them from the
 * page's `approval-responded` tool parts, i.e. after `useChat`'s `addToolApprovalResponse`), each
 * `{ token: approvalId, answer: approved ? 'allowed-once' : 'rejected' }`, in the order given. The
 * approval id is not checked here: `pipeline.resume` checks each token (its signature, turn, call,
 * expiry, and that it is answered once), and refuses the whole resume for one bad token.
 *
 * A response's `reason` is not passed on: a rejected call's result says that a human rejected it.
 *
 * @param messages - The conversation, as the next request brings it.
 * @returns The answers; empty when the history ends with no response to an approval (or goes on
 *   past the step: a user message after it).
 *
 * @example
 * ```ts
 * const messages = await convertToModelMessages(uiMessages);
 * await pipeline.resume(turn, { answers: fromAISDKApprovalResponses(messages) });
 * ```
 */
export function fromAISDKApprovalResponses(messages: readonly ModelMessage[]): ApprovalResponse[] {
  const answers: ApprovalResponse[] = [];
  const after = messages.slice(lastAssistantIndex(messages) + 1);
  // A user message after the step: the conversation went on, and these answers were given before.
  if (after.some((message) => message.role !== 'tool')) return [];
  for (const message of after) {
    if (message.role !== 'tool') continue;
    for (const part of message.content) {
      if (part.type !== 'tool-approval-response' || part.providerExecuted === true) continue;
      answers.push({ token: part.approvalId, answer: part.approved === true ? 'allowed-once' : 'rejected' });
    }
  }
  return answers;
}

/** Where the last assistant message is; -1 when there is none. */
export function lastAssistantIndex(messages: readonly ModelMessage[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.role === 'assistant') return i;
  return -1;
}
