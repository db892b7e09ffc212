// The types live in types/, the leaf room; this path re-exports them for its importers.
export type { Decision, TraceEntry } from '../types/decision.js';
export type {
  ApprovalAnswer,
  ApprovalRequest,
  Approver,
  PostContext,
  PostDecision,
  PostPolicy,
  PreContext,
  PreDecision,
  PrePolicy,
  StartCheck,
  StartVerdict,
} from '../types/policy.js';
