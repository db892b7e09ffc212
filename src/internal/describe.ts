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
