/** A short, safe description of any value for error messages. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `an array of length ${value.length}`;
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
    case 'number':
    case 'boolean':
    case 'bigint':
    case 'undefined':
      return String(value);
    case 'function':
      return 'a function';
    case 'symbol':
      return 'a symbol';
    default:
      return 'an object';
  }
}

/** The message of anything thrown, never throwing itself. */
export function describeError(error: unknown): string {
  try {
    if (error instanceof Error) {
      // message and name are whatever the thrower put there: only a string is a message.
      const { message, name } = error as { message: unknown; name: unknown };
      if (typeof message === 'string' && message !== '') return message;
      return typeof name === 'string' && name !== '' ? name : 'an error without a message';
    }
    if (typeof error === 'string') return error;
    return describeValue(error);
  } catch {
    return 'an unprintable error';
  }
}

/**
 * What an aborted signal's `reason` says, for a `cancelled` result: `undefined` when it says nothing —
 * no reason, or the runtime's default `AbortError` (`controller.abort()` without an argument) — else
 * an error's message, a string as it is, any other value described; cut to 200 characters (it goes
 * to the model). A string, so it journals and clones as it is.
 */
export function describeAbortReason(reason: unknown): string | undefined {
  if (reason === undefined || isDefaultAbort(reason)) return undefined;
  const text = cut(describeError(reason), 200);
  return text === '' ? undefined : text;
}

/** The message of the runtime's own `AbortError` (it differs between runtimes), read once when first needed. */
let defaultAbortMessage: string | undefined;

function isDefaultAbort(reason: unknown): boolean {
  if (!(reason instanceof DOMException) || reason.name !== 'AbortError') return false;
  if (defaultAbortMessage === undefined) {
    const controller = new AbortController();
    controller.abort();
    defaultAbortMessage = (controller.signal.reason as DOMException).message;
  }
  return reason.message === defaultAbortMessage;
}

/**
 * Text from outside (a tool name, a call id) for a message, JSON-quoted and cut to `max` characters,
 * with its length when cut: `"abc…" (1048576 characters)`. A model's 1 MB tool name must not become
 * a 1 MB message back to the model.
 */
export function quote(text: string, max = 100): string {
  if (text.length <= max) return JSON.stringify(text);
  return `${JSON.stringify(`${text.slice(0, max - 1)}…`)} (${text.length} characters)`;
}

/** `text` cut to `max` characters, saying how long it was: `abc… (1048576 characters)`. */
export function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}… (${text.length} characters)`;
}
