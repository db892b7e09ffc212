import { DurableTurnError } from '../durable/errors.js';
import type { ToolResult } from '../types/toolResult.js';

/**
 * The results, when every one answers its call: a provider must get one answer per call, and a
 * suspended call has none yet. The formatters call this before building a tool-result message; it
 * lives with them, its only users, so the engine does not import the durable layer's error.
 *
 * The loop helpers (`runAnthropicTurn`, `runOpenAIChatTurn`, `runOpenAIResponsesTurn`) never call it
 * with a suspended result: they resolve with `outcome: 'suspended'` and a continuation instead.
 *
 * @throws {DurableTurnError} `turn_suspended` when a result is `suspended`: resume the turn first.
 */
export function answerable(results: readonly ToolResult[]): readonly ToolResult[] {
  const suspended = results.filter((result) => result.status === 'suspended');
  if (suspended.length > 0) {
    const ids = suspended.slice(0, 5).map((result) => JSON.stringify(result.id)).join(', ');
    throw new DurableTurnError(
      'turn_suspended',
      `${suspended.length} call(s) of this turn are suspended (${ids}${suspended.length > 5 ? ', …' : ''}): they have no answer for the model yet. Resume the turn (pipeline.resume) once its approvals are answered, and send its results.`,
    );
  }
  return results;
}
