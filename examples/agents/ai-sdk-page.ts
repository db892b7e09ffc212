// The page side of examples/agents/ai-sdk-approvals.ts: useChat and its approval UI, as the AI SDK's docs
// show them, nothing of toolstream. One thing differs from a page whose tools run in the SDK: a call the
// model made after the one waiting for approval, which may not overtake it (an exclusive call is a
// barrier), has no output yet either — its part stays `input-available` until the resumed turn runs it —
// and the SDK's `lastAssistantMessageIsCompleteWithApprovalResponses` would wait for it forever.
//
//   const { messages, addToolApprovalResponse } = useChat({ sendAutomaticallyWhen: sendWhenApproved });
//   // a tool part in state 'approval-requested':
//   <button onClick={() => addToolApprovalResponse({ id: part.approval.id, approved: true })}>Approve</button>
import { isToolUIPart, lastAssistantMessageIsCompleteWithApprovalResponses, type UIMessage } from 'ai';

// #region sendWhenApproved
/** useChat's `sendAutomaticallyWhen`: the SDK's own test, but a call that waits behind an approval does not hold the answers back. */
export function sendWhenApproved({ messages }: { messages: UIMessage[] }): boolean {
  const last = messages.at(-1);
  if (last?.role !== 'assistant') return false;
  const parts = last.parts.filter((part) => !isToolUIPart(part) || part.state !== 'input-available');
  return lastAssistantMessageIsCompleteWithApprovalResponses({ messages: [...messages.slice(0, -1), { ...last, parts }] });
}
// #endregion sendWhenApproved
