// Tool calls as a model emits them. (A leaf: imports only from types/.)

/**
 * One tool call as a model emits it.
 *
 * `args` is what the model produced: a JSON string (as OpenAI and most stream parsers hand it over) or
 * an already parsed value (as Anthropic's SDK does). The intake stage parses and validates it; nothing
 * here is trusted.
 *
 * @example
 * ```ts
 * const call: ToolCall = { id: 'toolu_01', name: 'read_file', args: '{"path":"README.md"}' };
 * ```
 */
export interface ToolCall {
  /** The provider's id for the call; the result carries it back (`tool_use_id`, `tool_call_id`). */
  readonly id: string;
  /** The name of the tool the model asked for. */
  readonly name: string;
  /** The arguments: a JSON string or a parsed value. */
  readonly args: unknown;
  /**
   * The model response this call belongs to (the adapters set the response or message id). A failure
   * that cancels the rest cancels only unfinished calls of the same turn, so one long-lived
   * subscription can carry a whole conversation. Calls without one share the subscription's turn.
   */
  readonly turn?: string;
}
