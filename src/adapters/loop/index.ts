// The parts every provider's durable loop shares (continuations, outcomes, the loop driver, stop
// conditions); re-exported by `toolstream/anthropic`, `toolstream/openai` and `toolstream/ai-sdk`.
export { checkSecret, issueContinuation, verifyContinuation } from './continuation.js';
export { ContinuationError } from './errors.js';
export type { Continuation, ContinuationOptions, DurableTurnFields, LoopProvider, TurnOutcome } from './outcome.js';
export { continueDurableTurn, durableFields, readInFull, settleRun } from './durableTurn.js';
export type { ContinueOptions, Settlement, TurnFacts, TurnPlace } from './durableTurn.js';
export { DEFAULT_MAX_STEPS, driveLoop } from './driveLoop.js';
export type { LoopOptions, LoopOutcome, LoopRequestContext, LoopResult, LoopSteps, LoopTurn } from './driveLoop.js';
export { hasToolCall, stepCountIs } from './stopConditions.js';
export type { LoopState, StopCondition } from './stopConditions.js';
