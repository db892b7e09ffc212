import type { ContentBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { isObject, isRecord } from '../../util/validate.js';

/**
 * The assistant message of one streamed response, as the next request's history takes it: what
 * `runAnthropicTurn` assembles (`turn.message`).
 *
 * @example
 * ```ts
 * const message: AnthropicAssistantMessage = { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] };
 * ```
 */
export interface AnthropicAssistantMessage {
  role: 'assistant';
  content: ContentBlockParam[];
}

/** A block being streamed, by its content-block index in the current message. */
interface OpenBlock {
  /** The block, as started and grown by its deltas (a copy the assembler owns). */
  readonly block: Record<string, unknown>;
  /** The `input_json_delta` fragments so far, joined. */
  json: string;
  /** Whether any `input_json_delta` arrived. */
  streamed: boolean;
}

/**
 * Assembles the assistant message from the same events the calls come from, as the SDK's own
 * accumulator (`MessageStream`) does: blocks in the order they started, text, citations, thinking and
 * signatures grown by their deltas, a tool block's input parsed from its fragments. It reads the events
 * as `ToolUseAssembler` does — only content between a `message_start` and its `message_stop`, the
 * complete blocks `message_start` already carries included — so the `tool_use` blocks it keeps are
 * exactly the calls the adapter emitted. Untrusted input: anything malformed is skipped. Internal.
 *
 * Three differences make the message one Anthropic accepts back: a text block that stayed empty is left
 * out (the API rejects empty text blocks, though it streams them); a tool block whose fragments are
 * not a JSON object (cut off by `max_tokens`, or malformed) gets `input: {}` — its `tool_result` tells
 * the model what was wrong; and a `tool_use` block whose id the message already holds (the same block
 * in `message_start` and streamed, or replayed) is left out, as the API rejects a repeated id.
 *
 * @example
 * ```ts
 * const assembler = new AssistantMessageAssembler();
 * for await (const event of stream) assembler.push(event);
 * messages.push(assembler.message());
 * ```
 */
export class AssistantMessageAssembler {
  /** Every block so far, of every message of the source, in order. */
  readonly #blocks: Record<string, unknown>[] = [];
  /** The current message's blocks still streaming, by content-block index. */
  readonly #open = new Map<number, OpenBlock>();
  /** Whether a message is being streamed (from its `message_start` to its `message_stop`). */
  #inMessage = false;
  /** The last `stop_reason` reported. */
  #stopReason: string | undefined;
  /** The ids of the `tool_use` blocks the message holds: each once. */
  readonly #toolUseIds = new Set<string>();

  /** Why the model stopped (`'tool_use'`, `'end_turn'`, `'max_tokens'`, `'pause_turn'`, …), once reported. */
  get stopReason(): string | undefined {
    return this.#stopReason;
  }

  push(event: unknown): void {
    if (!isObject(event)) return;
    const type = event['type'];
    if (type === 'message_start') return this.#startMessage(event['message']);
    if (!this.#inMessage) return; // content outside a message is nobody's (ToolUseAssembler skips it too)
    switch (type) {
      case 'content_block_start':
        return this.#start(event['index'], event['content_block']);
      case 'content_block_delta':
        return this.#delta(event['index'], event['delta']);
      case 'content_block_stop':
        return this.#stop(event['index']);
      case 'message_delta': {
        const delta = event['delta'];
        if (isObject(delta) && typeof delta['stop_reason'] === 'string') this.#stopReason = delta['stop_reason'];
        return;
      }
      case 'message_stop':
        this.#closeAll();
        this.#inMessage = false;
        return;
      default:
        return;
    }
  }

  /** The message so far (blocks still open are closed as they are). */
  message(): AnthropicAssistantMessage {
    this.#closeAll();
    const content = this.#blocks.filter((block) => !(block['type'] === 'text' && block['text'] === ''));
    return { role: 'assistant', content: content as unknown as ContentBlockParam[] };
  }


  #startMessage(message: unknown): void {
    this.#closeAll();
    this.#inMessage = true;
    const stopReason = isObject(message) ? message['stop_reason'] : undefined;
    if (typeof stopReason === 'string') this.#stopReason = stopReason;
    const content = isObject(message) ? message['content'] : undefined;
    if (!Array.isArray(content)) return;
    for (const block of content as unknown[]) if (isRecord(block) && this.#holds(block)) this.#blocks.push({ ...block });
  }

  /** Whether the message takes `block`: any block but a `tool_use` whose id it already holds. */
  #holds(block: Record<string, unknown>): boolean {
    const id = block['id'];
    if (block['type'] !== 'tool_use' || typeof id !== 'string') return true;
    if (this.#toolUseIds.has(id)) return false;
    this.#toolUseIds.add(id);
    return true;
  }

  #start(index: unknown, block: unknown): void {
    if (typeof index !== 'number' || !isRecord(block)) return;
    // A second start for an open index (a broken stream): the first block stays as it got.
    this.#close(index);
    // A repeated `tool_use` (its deltas find no open block, and are dropped with it).
    if (!this.#holds(block)) return;
    const copy = { ...block };
    this.#blocks.push(copy);
    this.#open.set(index, { block: copy, json: '', streamed: false });
  }

  #delta(index: unknown, delta: unknown): void {
    if (typeof index !== 'number' || !isObject(delta)) return;
    const open = this.#open.get(index);
    if (open === undefined) return;
    const { block } = open;
    switch (delta['type']) {
      case 'text_delta':
        if (block['type'] === 'text' && typeof delta['text'] === 'string') block['text'] = String(block['text'] ?? '') + delta['text'];
        return;
      case 'citations_delta': {
        const citations = Array.isArray(block['citations']) ? (block['citations'] as unknown[]) : [];
        if (block['type'] === 'text' && isObject(delta['citation'])) block['citations'] = [...citations, delta['citation']];
        return;
      }
      case 'thinking_delta':
        if (block['type'] === 'thinking' && typeof delta['thinking'] === 'string') block['thinking'] = String(block['thinking'] ?? '') + delta['thinking'];
        return;
      case 'signature_delta':
        if (block['type'] === 'thinking' && typeof delta['signature'] === 'string') block['signature'] = delta['signature'];
        return;
      case 'input_json_delta':
        if ('input' in block && typeof delta['partial_json'] === 'string') {
          open.json += delta['partial_json'];
          open.streamed = true;
        }
        return;
      default:
        return;
    }
  }

  #stop(index: unknown): void {
    if (typeof index === 'number') this.#close(index);
  }

  #close(index: number): void {
    const open = this.#open.get(index);
    if (open === undefined) return;
    this.#open.delete(index);
    // As the adapter reads a call's arguments: the fragments when any came (even empty ones), else the start input.
    if (open.streamed) open.block['input'] = objectOrEmpty(open.json);
  }

  #closeAll(): void {
    for (const index of [...this.#open.keys()]) this.#close(index);
  }
}

/** The fragments as a JSON object, or `{}` when they are empty, cut off, malformed or not an object. */
function objectOrEmpty(json: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(json);
    return isRecord(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
