import { IncompleteArguments } from '../incompleteArguments.js';
import type { ToolCall } from '../toolCall.js';
import type { DurableSettings, GivenAnswer, ResumePlan } from './durableBatch.js';
import { DurableTurnError } from './errors.js';
import { foldTurn, type JournaledCall } from './turnState.js';
import type { ApprovalResponse, PendingApproval } from './types.js';

/**
 * What resuming `turn` with `answers` runs: the turn's calls, in order, as first received, and the
 * plan (journal folded, answers checked). Every answer is checked first — signature, turn, call,
 * expiry, whether it was used — so a bad token refuses the resume before anything runs.
 * @throws {DurableTurnError} `turn_unknown`, or a `token_*` code naming the first bad answer.
 */
export async function planResume(
  durable: DurableSettings,
  turn: string,
  answers: readonly ApprovalResponse[],
): Promise<{ readonly calls: readonly ToolCall[]; readonly plan: ResumePlan }> {
  const entries = await durable.store.read(turn);
  const journaled = foldTurn(entries);
  if (journaled.size === 0) throw new DurableTurnError('turn_unknown', `The journal holds no turn ${JSON.stringify(turn)}.`);
  const byId = new Map([...journaled.values()].map((call) => [call.id, call]));
  const checked = new Map<number, GivenAnswer>();
  for (const [i, given] of answers.entries()) {
    const where = `answers[${i}]`;
    if (typeof given !== 'object' || given === null || (given.answer !== 'allowed-once' && given.answer !== 'rejected')) {
      throw new DurableTurnError('token_malformed', `${where}: expected { token, answer: 'allowed-once' | 'rejected' }.`);
    }
    const claims = durable.tokens.check(given.token);
    if (claims === 'malformed') throw new DurableTurnError('token_malformed', `${where}: not an approval token.`);
    if (claims === 'forged') throw new DurableTurnError('token_forged', `${where}: the token's signature does not hold: it was altered, or signed with another secret.`);
    if (claims.turn !== turn) throw new DurableTurnError('token_wrong_turn', `${where}: the token answers turn ${JSON.stringify(claims.turn)}, not ${JSON.stringify(turn)}.`);
    const call = byId.get(claims.callId);
    if (call === undefined) throw new DurableTurnError('token_unknown_call', `${where}: turn ${JSON.stringify(turn)} has no call ${JSON.stringify(claims.callId)}.`);
    if (claims.expiresAt <= Date.now()) throw new DurableTurnError('token_expired', `${where}: the approval of call ${JSON.stringify(call.id)} expired at ${new Date(claims.expiresAt).toISOString()}; ask again.`);
    if (!isOpen(call) || call.pending === undefined || call.pending.token !== given.token || checked.has(call.index)) {
      throw new DurableTurnError('token_used', `${where}: the approval of call ${JSON.stringify(call.id)} was answered already, or replaced by a newer one.`);
    }
    checked.set(call.index, { answer: given.answer, claims });
  }
  const ordered = [...journaled.values()].sort((a, b) => a.index - b.index);
  const calls = ordered.map((call): ToolCall => ({
    id: call.id,
    name: call.name,
    args: call.incomplete === undefined ? call.args : new IncompleteArguments(call.incomplete.reason, call.incomplete.partialText),
    turn,
  }));
  return { calls, plan: { journaled, answers: checked, entries: entries.length } };
}

/** The approvals a turn waits for, in call order. */
export async function pendingApprovals(durable: DurableSettings, turn: string): Promise<PendingApproval[]> {
  const journaled = foldTurn(await durable.store.read(turn));
  return [...journaled.values()]
    .filter((call) => isOpen(call) && call.pending !== undefined)
    .sort((a, b) => a.index - b.index)
    .map((call) => call.pending!);
}

/** A call that still waits for its approval: asked, not answered, not finished. */
function isOpen(call: JournaledCall): boolean {
  return call.finished === undefined && call.answered === undefined;
}
