// Approvals a suspended call waits for, and the answers given to `resume` (durable turns). (A leaf: imports only from types/.)

/**
 * An approval a suspended call waits for: what a human is asked, and the token that answers it. The
 * token is signed (HMAC-SHA256 with the pipeline's `approvalSecret`) over the turn, the call, the
 * admitted arguments and a nonce, and expires: it answers this call, with these arguments, once.
 *
 * @example
 * ```ts
 * for (const approval of await pipeline.pendingApprovals(turn)) {
 *   console.log(`${approval.tool}(${JSON.stringify(approval.args)})? ${approval.reasons.join('; ')}`);
 *   sendToHuman(approval.token);
 * }
 * ```
 */
export interface PendingApproval {
  readonly turn: string;
  /** The call's id; for a sub-call of a program (`run_code`), the sub-call's: `<call id>#<n>`. */
  readonly callId: string;
  /** The call's index in its turn (for a sub-call, its program's call's). */
  readonly index: number;
  /** The tool's name (for a sub-call, the tool the program called). */
  readonly tool: string;
  /** The arguments the body will receive if approved (the admitted snapshot). */
  readonly args: unknown;
  /** The reasons the policies gave for asking. */
  readonly reasons: readonly string[];
  /** Answers this approval, once: pass it to `resume(turn, { answers: [{ token, answer }] })`. */
  readonly token: string;
  /** When the token stops being accepted (epoch milliseconds). */
  readonly expiresAt: number;
}

/**
 * A human's answer to a pending approval, given to `resume`.
 *
 * @example
 * ```ts
 * const answer: ApprovalResponse = { token: approval.token, answer: 'allowed-once' };
 * await pipeline.resume(turn, { answers: [answer] });
 * ```
 */
export interface ApprovalResponse {
  readonly token: string;
  readonly answer: 'allowed-once' | 'rejected';
}
