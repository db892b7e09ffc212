import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import { IncompleteArguments } from '../../util/incompleteArguments.js';
import { isObject } from '../../util/validate.js';
import { inTurn, turnId } from '../../util/inTurn.js';
import type { ToolCall } from '../../types/toolCall.js';
import type { OpenAICustomTools } from './customTools.js';
import { OpenAIResponsesStreamError } from './errors.js';
import { OpenCalls, type CallKeys } from './openCalls.js';

/** A function call, or a custom tool call (free-form text) of a declared free-form tool. */
type CallKind = 'function' | 'custom';

/** The client call an output item holds. */
interface CallItem {
  readonly kind: CallKind;
  readonly callId: string;
  readonly name: string;
  readonly itemId: string | undefined;
  /** The item's `arguments` (function) or `input` (custom), when it carries them as a string. */
  readonly text: string | undefined;
  readonly status: unknown;
}

interface OpenCall extends CallKeys {
  readonly kind: CallKind;
  name: string;
  /** The arguments (function) or the input text (custom) so far. */
  text: string;
}

/** How an event ended the stream, if it did. */
export type End = 'complete' | { readonly error: OpenAIResponsesStreamError } | undefined;

/**
 * Tracks the open client calls of one response and emits each once, when it is done; one per
 * subscription. Events are read defensively (they are untrusted input). Internal;
 * `fromOpenAIResponsesStream` drives it.
 *
 * @example
 * ```ts
 * const assembler = new ResponsesCallAssembler(custom, (call) => subscriber.next(call));
 * const end = assembler.push(event); // 'complete' at response.completed
 * ```
 */
export class ResponsesCallAssembler {
  /** Open calls, in the order they were added. */
  readonly #open = new OpenCalls<OpenCall>();
  /** The `call_id`s emitted: each call is emitted once. */
  readonly #emitted = new Set<string>();

  /** The response being streamed, by its id (`response.created` brings it): the turn of its calls. */
  #turn: string | undefined;

  constructor(
    private readonly custom: OpenAICustomTools | undefined,
    private readonly sink: (call: ToolCall) => void,
  ) {}

  push(event: ResponseStreamEvent): End {
    if (!isObject(event)) return undefined;
    const response: unknown = (event as { response?: unknown }).response;
    if (isObject(response)) this.#turn = turnId(response['id']) ?? this.#turn;
    switch (event.type) {
      case 'response.output_item.added': {
        const item = this.#callItem(event.item);
        if (item === undefined || this.#emitted.has(item.callId) || this.#open.has(item.callId)) return undefined;
        this.#open.add({ ...keysOf(item, event.output_index), kind: item.kind, name: item.name, text: item.text ?? '' });
        return undefined;
      }
      case 'response.function_call_arguments.delta':
      case 'response.custom_tool_call_input.delta': {
        const open = this.#find(event.type === 'response.function_call_arguments.delta' ? 'function' : 'custom', event.item_id, event.output_index);
        if (open !== undefined && typeof event.delta === 'string') open.text += event.delta;
        return undefined;
      }
      case 'response.function_call_arguments.done': {
        const open = this.#find('function', event.item_id, event.output_index);
        if (open === undefined) return undefined;
        if (open.name === '' && typeof event.name === 'string') open.name = event.name;
        this.#close(open, typeof event.arguments === 'string' ? event.arguments : open.text, undefined);
        return undefined;
      }
      case 'response.custom_tool_call_input.done': {
        const open = this.#find('custom', event.item_id, event.output_index);
        if (open !== undefined) this.#close(open, typeof event.input === 'string' ? event.input : open.text, undefined);
        return undefined;
      }
      case 'response.output_item.done': {
        const item = this.#callItem(event.item);
        if (item === undefined || this.#emitted.has(item.callId)) return undefined;
        const open =
          this.#open.get(item.callId) ??
          this.#find(item.kind, item.itemId, event.output_index) ??
          // Done without ever being added: the item is whole, so it can be emitted all the same.
          { ...keysOf(item, event.output_index), kind: item.kind, name: item.name, text: '' };
        if (open.name === '') open.name = item.name;
        this.#close(open, item.text ?? open.text, item.status === 'incomplete' ? 'incomplete' : undefined);
        return undefined;
      }
      case 'response.completed': {
        // Calls still open (no done event reached us): use the final output when it holds them whole.
        const output: unknown = isObject(event.response) ? event.response.output : undefined;
        const final = new Map<string, CallItem>();
        if (this.#open.size > 0 && Array.isArray(output)) {
          for (const entry of output as unknown[]) {
            const item = this.#callItem(entry);
            if (item !== undefined && !final.has(item.callId)) final.set(item.callId, item);
          }
        }
        for (const open of this.#open.list()) {
          const item = final.get(open.callId);
          if (item?.text !== undefined && item.status !== 'incomplete' && item.status !== 'in_progress') {
            this.#close(open, item.text, undefined);
          } else {
            this.#close(open, open.text, 'stream_ended');
          }
        }
        return 'complete';
      }
      case 'response.incomplete': {
        const details: unknown = isObject(event.response) ? event.response.incomplete_details : undefined;
        const reason = isObject(details) && typeof details['reason'] === 'string' ? details['reason'] : undefined;
        this.closeAll(reason === 'max_output_tokens' ? 'max_tokens' : (reason ?? 'incomplete'));
        return 'complete';
      }
      case 'response.failed':
      case 'error': {
        this.closeAll('stream_error');
        return { error: new OpenAIResponsesStreamError(event) };
      }
      default:
        return undefined;
    }
  }

  /** Emits every open call as incomplete, in the order they were added. */
  closeAll(reason: string): void {
    for (const open of this.#open.list()) this.#close(open, open.text, reason);
  }

  /** The open call of that kind an event is about (by item id, else by output index). */
  #find(kind: CallKind, itemId: unknown, outputIndex: unknown): OpenCall | undefined {
    const open = this.#open.find(nonEmpty(itemId), outputIndex);
    return open?.kind === kind ? open : undefined;
  }

  /**
   * The call, complete when `incomplete` is undefined. A free-form call's text is the tool's input
   * string: it is passed as its JSON encoding, so the pipeline's intake (which parses string
   * arguments as JSON) hands the body the text exactly as the model wrote it.
   */
  /** Hands a call on, as part of the response it came in. */
  private emit(call: ToolCall): void {
    this.sink(inTurn(call, this.#turn));
  }

  #close(open: OpenCall, text: string, incomplete: string | undefined): void {
    this.#open.delete(open);
    if (this.#emitted.has(open.callId)) return;
    this.#emitted.add(open.callId);
    const args = incomplete !== undefined ? new IncompleteArguments(incomplete, text) : open.kind === 'custom' ? JSON.stringify(text) : text;
    this.emit({ id: open.callId, name: open.name, args });
  }

  /**
   * The client call an output item holds: a `function_call` with a `call_id`, or a `custom_tool_call`
   * of a tool declared free-form. Any other `custom_tool_call` is a server's own (xAI reports its
   * x_search calls that way) and not ours to run.
   */
  #callItem(item: unknown): CallItem | undefined {
    if (!isObject(item) || typeof item['call_id'] !== 'string') return undefined;
    const name = typeof item['name'] === 'string' ? item['name'] : '';
    const base = { callId: item['call_id'], name, itemId: nonEmpty(item['id']), status: item['status'] };
    if (item['type'] === 'function_call') {
      return { ...base, kind: 'function', text: typeof item['arguments'] === 'string' ? item['arguments'] : undefined };
    }
    if (item['type'] === 'custom_tool_call' && this.custom?.has(name) === true) {
      return { ...base, kind: 'custom', text: typeof item['input'] === 'string' ? item['input'] : undefined };
    }
    return undefined;
  }
}

function keysOf(item: CallItem, outputIndex: unknown): CallKeys {
  return { callId: item.callId, itemId: item.itemId, outputIndex: typeof outputIndex === 'number' ? outputIndex : undefined };
}

function nonEmpty(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
