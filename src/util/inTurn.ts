import type { ToolCall } from '../types/toolCall.js';

/** `call` as part of `turn` (the model response it came in), or as it is when the turn is unknown. */
export function inTurn(call: ToolCall, turn: string | undefined): ToolCall {
  return turn === undefined ? call : { id: call.id, name: call.name, args: call.args, turn };
}

/** A non-empty string id, or undefined: what the adapters take as a response's turn. */
export function turnId(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
