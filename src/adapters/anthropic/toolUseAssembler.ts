import { IncompleteArguments } from '../../util/incompleteArguments.js';
import type { ToolCall } from '../../types/toolCall.js';
import { AnthropicStreamError, type AnthropicErrorEvent } from './events.js';
import { inTurn, turnId } from '../../util/inTurn.js';
import { isObject } from '../../util/validate.js';

/** A `tool_use` block whose arguments are still arriving. */
interface OpenToolUse {
  readonly id: string;
  readonly name: string;
  /** The block's `input` at `content_block_start` (`{}` in every stream the API sends). */
  readonly startInput: unknown;
  /** The `input_json_delta` fragments so far, joined. */
  text: string;
  /** Whether any `input_json_delta` arrived (even an empty one). */
  streamed: boolean;
}

/**
 * The state of one subscription: turns Anthropic stream events into tool calls, each emitted as soon
 * as its block is complete. Events are read defensively (they are untrusted input): anything that is
 * not a well-formed event of a known type is ignored. Internal; `fromAnthropicStream` drives it.
 *
 * @example
 * ```ts
 * const assembler = new ToolUseAssembler((call) => subscriber.next(call));
 * for await (const event of events) {
 *   const failure = assembler.push(event);
 *   if (failure !== undefined) throw failure;
 * }
 * assembler.end();
 * ```
 */
export class ToolUseAssembler {
  /** Open `tool_use` blocks by content-block index, in the order they started. */
  readonly #open = new Map<number, OpenToolUse>();
  /** The current message's `stop_reason`, once `message_start` or `message_delta` reported one. */
  #stopReason: string | undefined;
  /**
   * Whether a message is being streamed: from its `message_start` to its `message_stop`. Content
   * events outside one belong to no message, so nothing in them is a call of this turn.
   */
  #inMessage = false;

  /** The message being streamed, by its id: the turn of its calls. */
  #turn: string | undefined;
  /**
   * The ids of the calls of this turn, emitted or open: a `tool_use` block with one of them is the same
   * call again (in `message_start` and streamed too, or replayed) and is neither emitted nor answered twice.
   */
  #claimed = new Set<string>();

  constructor(private readonly sink: (call: ToolCall) => void) {}

  /** Hands a call on, as part of the message it came in. */
  private emit(call: ToolCall): void {
    this.sink(inTurn(call, this.#turn));
  }

  /**
   * Takes one event. Returns the error the stream must fail with when the event is an `error` event
   * (the open calls have then been emitted as incomplete), else `undefined`.
   */
  push(event: unknown): Error | undefined {
    if (typeof event !== 'object' || event === null) return undefined;
    const fields = event as Record<string, unknown>;
    const type = fields['type'];
    if (type === 'message_start') {
      this.#startMessage(fields['message']);
      return undefined;
    }
    if (type === 'error') {
      this.cutOff('stream_error');
      return new AnthropicStreamError(event as AnthropicErrorEvent);
    }
    // Before its `message_start` or after its `message_stop`: no message is being streamed, so a
    // `tool_use` here is nobody's call (a broken or tampered stream) and must not run.
    if (!this.#inMessage) return undefined;
    switch (type) {
      case 'content_block_start':
        this.#start(fields['index'], fields['content_block']);
        return undefined;
      case 'content_block_delta':
        this.#delta(fields['index'], fields['delta']);
        return undefined;
      case 'content_block_stop':
        this.#stop(fields['index']);
        return undefined;
      case 'message_delta': {
        const delta = fields['delta'];
        const stopReason = isObject(delta) ? delta['stop_reason'] : undefined;
        if (typeof stopReason === 'string') {
          this.#stopReason = stopReason;
          // The model stopped with blocks still open (max_tokens, refusal, …): their arguments are cut off.
          this.cutOff(stopReason);
        }
        return undefined;
      }
      case 'message_stop':
        this.end();
        this.#inMessage = false;
        return undefined;
      default:
        // ping, and event types this adapter does not know (yet)
        return undefined;
    }
  }

  /**
   * The message ended (`message_stop`) or the source completed: a block still open never stopped, so
   * its arguments were cut off — by the reported `stop_reason`, else taken to be `max_tokens`.
   */
  end(): void {
    this.cutOff(this.#stopReason ?? 'max_tokens');
  }

  /** Emits every open call as incomplete, in the order the blocks started, and forgets them. */
  cutOff(reason: string): void {
    if (this.#open.size === 0) return;
    const open = [...this.#open.values()];
    this.#open.clear();
    for (const block of open) {
      this.emit({ id: block.id, name: block.name, args: new IncompleteArguments(reason, block.text) });
    }
  }

  /**
   * A message starts. Blocks still open belong to the previous one, which was interrupted. The
   * `tool_use` blocks its `content` already holds are complete — programmatic tool calling resumes a
   * program's turn that way, with no content-block events for them — so they are emitted now, in order.
   */
  #startMessage(message: unknown): void {
    this.cutOff('stream_error');
    this.#inMessage = true;
    const turn = isObject(message) ? turnId(message['id']) : undefined;
    // The same message id again is the same turn replayed; any other message is a turn of its own,
    // where an id an earlier one used is a new call (the pipeline answers it `duplicate_id`).
    if (turn === undefined || turn !== this.#turn) this.#claimed = new Set();
    this.#turn = turn;
    const stopReason = isObject(message) ? message['stop_reason'] : undefined;
    this.#stopReason = typeof stopReason === 'string' ? stopReason : undefined;
    const content = isObject(message) ? message['content'] : undefined;
    if (!Array.isArray(content)) return;
    for (const block of content as unknown[]) {
      if (!isObject(block) || block['type'] !== 'tool_use' || !this.#claim(block['id'])) continue;
      // As sent, like a block's start `input`: the pipeline's intake answers a malformed one.
      this.emit({ id: block['id'] as string, name: block['name'] as string, args: block['input'] });
    }
  }

  #start(index: unknown, block: unknown): void {
    if (typeof index !== 'number' || !isObject(block)) return;
    // Only `tool_use` blocks are ours to run. `server_tool_use` (web search, code execution, …) and
    // `mcp_tool_use` run on Anthropic's side; text, thinking and result blocks carry no call.
    if (block['type'] !== 'tool_use') return;
    // Two starts for one index without a stop in between: the stream is broken; the first is cut off.
    const previous = this.#open.get(index);
    if (previous !== undefined) {
      this.#open.delete(index);
      this.emit({ id: previous.id, name: previous.name, args: new IncompleteArguments('stream_error', previous.text) });
    }
    // A block of a call this turn already has (from `message_start`, or replayed): that call is answered once.
    if (!this.#claim(block['id'])) return;
    this.#open.set(index, {
      // Passed on as sent even when not strings: the pipeline's intake answers a malformed call with an
      // `invalid_call` result rather than this adapter dropping it.
      id: block['id'] as string,
      name: block['name'] as string,
      startInput: block['input'],
      text: '',
      streamed: false,
    });
  }

  /**
   * Takes `id` for a call of this turn; false when the turn already has a call with it. A block without
   * a string id is no repeat of anything: the pipeline answers each such call `invalid_call`.
   */
  #claim(id: unknown): boolean {
    if (typeof id !== 'string') return true;
    if (this.#claimed.has(id)) return false;
    this.#claimed.add(id);
    return true;
  }

  #delta(index: unknown, delta: unknown): void {
    if (typeof index !== 'number' || !isObject(delta)) return;
    const block = this.#open.get(index);
    if (block === undefined) return;
    const fragment = delta['partial_json'];
    if (delta['type'] !== 'input_json_delta' || typeof fragment !== 'string') return;
    block.text += fragment;
    block.streamed = true;
  }

  #stop(index: unknown): void {
    if (typeof index !== 'number') return;
    const block = this.#open.get(index);
    if (block === undefined) return;
    this.#open.delete(index);
    this.emit({ id: block.id, name: block.name, args: completeArgs(block) });
  }
}

/**
 * The arguments of a complete block, as the SDK's own accumulator reads them: the joined fragments as
 * JSON text (the pipeline's intake parses it; bad JSON becomes an `invalid_json` result), `'{}'` when
 * the fragments are all empty or none came, and the block's start `input` when no fragment came and
 * that input is not the usual empty `{}`.
 */
function completeArgs(block: OpenToolUse): unknown {
  if (!block.streamed && block.startInput !== undefined && !isEmptyObject(block.startInput)) return block.startInput;
  return block.text === '' ? '{}' : block.text;
}

function isEmptyObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0;
}
