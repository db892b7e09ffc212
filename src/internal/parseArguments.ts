/**
 * The arguments as the model meant them: a JSON string parsed (a blank one means `{}`, as providers
 * send for tools without parameters), anything else as it is.
 *
 * @throws {SyntaxError} for a string that is not JSON.
 */
export function parseArguments(raw: unknown): unknown {
  if (typeof raw !== 'string') return raw;
  return raw.trim() === '' ? {} : JSON.parse(raw);
}
