import type { AssistantModelMessage, ModelMessage } from 'ai';
import type { ApprovalResponse } from '../../types/pendingApproval.js';
import type { Pipeline } from '../../types/pipeline.js';
import { checkSecret, continueDurableTurn, ContinuationError, verifyContinuation, type ContinueOptions } from '../loop/index.js';
import { fromAISDKApprovalResponses, lastAssistantIndex } from './aisdkApprovals.js';
import { aisdkTurnOf, callIdsOf } from './aisdkTurnOf.js';
import type { AISDKTurn } from './aisdkTurn.js';

/**
 * Goes on with a suspended step of an AI SDK loop — in this process or another one whose pipeline
 * has the same journal store and secret — with the human's answers found in the history, and
 * assembles what the next `streamText` call needs.
 *
 * The history is the conversation as the next request brings it, ending with the suspended step: its
 * assistant message (with its `tool-approval-request` parts), then the tool messages after it, holding
 * the `tool-approval-response` parts. `convertToModelMessages` writes both from `useChat`'s messages
 * after `addToolApprovalResponse`; without a page, append `{ role: 'tool', content: [{ type:
 * 'tool-approval-response', approvalId, approved }] }` to the turn's `messages`. Each answer becomes
 * `{ token: approvalId, answer: approved ? 'allowed-once' : 'rejected' }` (with `options.answers`,
 * if any). Then, as every provider's `continue…Turn`: the continuation is checked (signature, provider,
 * expiry) and consumed in the journal store — submitted twice, the second is refused with
 * `continuation_used` — each answer must be a pending approval of the turn, and the turn resumes: the
 * finished calls are replayed from the journal (never run again), the approved ones run once, the
 * rejected ones are denied, and the calls that waited behind them run.
 *
 * @param pipeline A pipeline with the journal and secret the turn ran with (a fresh one will do).
 * @param continuation The suspended turn's `continuation`, as received (parsed JSON).
 * @param messages The history, ending with the suspended step (see above).
 * @param options `answers` beside those in the history; `signal`; `secret` if the loop signs with its own.
 * @returns The step's turn: `'next'` with `messages` the step's assistant message (without its
 *   approval parts), then **one** tool message with every result in the model's order: they stand in
 *   place of the step's messages in the history. `'suspended'` again when an approval is still
 *   unanswered (or a call that waited now asks), with a fresh continuation. `'turn_leased'` /
 *   `'lease_lost'` when another process drives the turn: `messages` is the step as given.
 * @throws {ConfigError} (as a rejection, before anything runs) for a `secret` under 32 bytes.
 * @throws {ContinuationError} (as a rejection, before anything ran): see its codes; also
 *   `continuation_malformed` when the history's last assistant message does not hold the step's calls.
 *   An `answer_not_pending` (an approval id altered, or answered already) is found before the
 *   continuation is consumed: it stays good for a corrected submit (the error's `continuation` is it).
 * @throws {DurableTurnError} as `pipeline.resume` does (a token that expired in between).
 *
 * @example
 * ```ts
 * const history = await convertToModelMessages(uiMessages); // the page answered the approvals
 * const turn = await continueAISDKTurn(pipeline, continuation, history);
 * const at = history.findLastIndex((m) => m.role === 'assistant');
 * if (turn.outcome === 'next') streamText({ model, tools, messages: [...history.slice(0, at), ...turn.messages] });
 * ```
 */
export async function continueAISDKTurn(pipeline: Pipeline, continuation: unknown, messages: readonly ModelMessage[], options: ContinueOptions = {}): Promise<AISDKTurn> {
  checkSecret('continueAISDKTurn', options.secret);
  const claims = verifyContinuation(pipeline, continuation, 'ai-sdk', options);
  const at = lastAssistantIndex(messages);
  const expected = (claims.state as { readonly toolCallIds?: unknown } | null)?.toolCallIds;
  const assistant = at < 0 ? undefined : withoutApprovalRequests(messages[at] as AssistantModelMessage);
  if (assistant === undefined || JSON.stringify(callIdsOf([assistant])) !== JSON.stringify(expected)) {
    throw new ContinuationError(
      'continuation_malformed',
      `The history does not end with the suspended step of turn ${JSON.stringify(claims.turn)}: its last assistant message must hold the calls ${JSON.stringify(expected)}. Pass the conversation as the page sent it (convertToModelMessages).`,
    );
  }
  const answers = unique([...fromAISDKApprovalResponses(messages), ...(options.answers ?? [])]);
  // Checked before the continuation is consumed: an answer a browser altered (or one for an approval
  // answered already) leaves the continuation as it was, so the page's own answers still go through.
  const waiting = new Set((await pipeline.pendingApprovals(claims.turn)).map((approval) => approval.token));
  const stale = answers.filter((answer) => !waiting.has(answer.token)).length;
  if (stale > 0) {
    throw new ContinuationError(
      'answer_not_pending',
      `${stale} of the ${answers.length} answer(s) in the history answer no approval turn ${JSON.stringify(claims.turn)} waits for (altered, answered already — a second submit —, or another turn's): nothing ran, and the continuation was not used.`,
      claims,
    );
  }
  const { continuation: used, settled } = await continueDurableTurn(pipeline, continuation, 'ai-sdk', { ...options, answers });
  const turn = aisdkTurnOf(pipeline, settled, {
    assistant: [assistant],
    text: textOf(assistant),
    turn: used.turn,
    step: used.step,
    ...(options.secret === undefined ? {} : { secret: options.secret }),
  });
  return settled.kind === 'turn_leased' || settled.kind === 'lease_lost' ? { ...turn, messages: messages.slice(at) } : turn;
}

/** Each token once (the first answer given for it): the history and `options.answers` may both hold one. */
function unique(answers: readonly ApprovalResponse[]): ApprovalResponse[] {
  const seen = new Set<string>();
  return answers.filter((answer) => !seen.has(answer.token) && (seen.add(answer.token), true));
}

/** The assistant message without its approval requests: the turn writes the ones still pending. */
function withoutApprovalRequests(message: AssistantModelMessage): AssistantModelMessage {
  if (typeof message.content === 'string') return message;
  return { ...message, content: message.content.filter((part) => part.type !== 'tool-approval-request') };
}

function textOf(message: AssistantModelMessage): string {
  if (typeof message.content === 'string') return message.content;
  return message.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');
}
