import { IncompleteArguments } from '../util/incompleteArguments.js';
import type { ApprovalResponse, PendingApproval } from '../types/pendingApproval.js';
import type { ToolCall } from '../types/toolCall.js';
import type { DurableSettings, GivenAnswer, ResumePlan } from './settings.js';
import { DurableTurnError } from './errors.js';
import { foldTurn, openProgramApprovals, type JournaledCall } from './turnState.js';

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
  const ordered = [...journaled.values()].sort((a, b) => a.index - b.index);
  // A token answers the call whose journaled approval it is, found by token (so by index), not by id:
  // the model may have sent an id twice, and the duplicate (answered `duplicate_id`) must not shadow
  // the call that waits. By id, the first call received with it (the one intake admitted) names the
  // call of a token no call waits for any more, and a sub-call's program.
  const pendingOf = new Map<string, JournaledCall>();
  const byId = new Map<string, JournaledCall>();
  for (const call of ordered) {
    if (call.pending !== undefined) pendingOf.set(call.pending.token, call);
    if (!byId.has(call.id)) byId.set(call.id, call);
  }
  // The approvals programs wait for, by token: a sub-call's token answers its program's call.
  const programOf = new Map<string, JournaledCall>();
  for (const call of journaled.values()) for (const { token } of openProgramApprovals(call)) programOf.set(token, call);
  const checked = new Map<number, GivenAnswer>();
  const programAnswers = new Map<number, GivenAnswer[]>();
  const givenTokens = new Set<string>();
  for (const [i, given] of answers.entries()) {
    const where = `answers[${i}]`;
    if (typeof given !== 'object' || given === null || (given.answer !== 'allowed-once' && given.answer !== 'rejected')) {
      throw new DurableTurnError('token_malformed', `${where}: expected { token, answer: 'allowed-once' | 'rejected' }.`);
    }
    const claims = durable.tokens.check(given.token);
    if (claims === 'malformed') throw new DurableTurnError('token_malformed', `${where}: not an approval token.`);
    if (claims === 'forged') throw new DurableTurnError('token_forged', `${where}: the token's signature does not hold: it was altered, or signed with another secret.`);
    if (claims.turn !== turn) throw new DurableTurnError('token_wrong_turn', `${where}: the token answers turn ${JSON.stringify(claims.turn)}, not ${JSON.stringify(turn)}.`);
    const program = programOf.get(given.token);
    const call = program ?? pendingOf.get(given.token) ?? byId.get(claims.callId) ?? subCallOf(claims.callId, byId);
    if (call === undefined) throw new DurableTurnError('token_unknown_call', `${where}: turn ${JSON.stringify(turn)} has no call ${JSON.stringify(claims.callId)}.`);
    if (claims.expiresAt <= Date.now()) throw new DurableTurnError('token_expired', `${where}: the approval of call ${JSON.stringify(claims.callId)} expired at ${new Date(claims.expiresAt).toISOString()}; ask again.`);
    const open = program !== undefined || (call.id === claims.callId && isOpen(call) && call.pending?.token === given.token);
    if (!open || givenTokens.has(given.token)) {
      throw new DurableTurnError('token_used', `${where}: the approval of call ${JSON.stringify(claims.callId)} was answered already, or replaced by a newer one.`);
    }
    givenTokens.add(given.token);
    const answer: GivenAnswer = { answer: given.answer, claims, token: given.token };
    if (program === undefined) checked.set(call.index, answer);
    else programAnswers.set(call.index, [...(programAnswers.get(call.index) ?? []), answer]);
  }
  const calls = ordered.map((call): ToolCall => ({
    id: call.id,
    name: call.name,
    args: call.incomplete === undefined ? call.args : new IncompleteArguments(call.incomplete.reason, call.incomplete.partialText),
    turn,
  }));
  return { calls, plan: { journaled, answers: checked, programAnswers, entries: entries.length } };
}

/** The approvals a turn waits for, in call order (a program's call: its own, then its sub-calls'). */
export async function pendingApprovals(durable: DurableSettings, turn: string): Promise<PendingApproval[]> {
  const journaled = foldTurn(await durable.store.read(turn));
  return [...journaled.values()]
    .sort((a, b) => a.index - b.index)
    .flatMap((call) => [...(isOpen(call) && call.pending !== undefined ? [call.pending] : []), ...openProgramApprovals(call)]);
}

/**
 * The program's call a sub-call id (`<call id>#<n>`) names, if the turn has it. A signed token for a
 * sub-call whose approval is not open any more was answered, or its program stopped waiting for it.
 */
function subCallOf(callId: string, byId: ReadonlyMap<string, JournaledCall>): JournaledCall | undefined {
  const at = callId.lastIndexOf('#');
  const call = at > 0 && /^\d+$/.test(callId.slice(at + 1)) ? byId.get(callId.slice(0, at)) : undefined;
  return call?.program !== undefined ? call : undefined;
}

/** A call that still waits for its approval: asked, not answered, not finished. */
function isOpen(call: JournaledCall): boolean {
  return call.finished === undefined && call.answered === undefined;
}
