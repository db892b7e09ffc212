import { IncompleteArguments } from '../../util/incompleteArguments.js';

/**
 * A call's arguments as the model sent them, for the history: the adapters emit them as the text
 * (`string`), or as an {@link IncompleteArguments} holding the text that came before the cut. Internal.
 *
 * @example
 * ```ts
 * argumentsText(new IncompleteArguments('max_tokens', '{"path":"sr')); // '{"path":"sr'
 * ```
 */
export function argumentsText(args: unknown): string {
  if (typeof args === 'string') return args;
  if (args instanceof IncompleteArguments) return args.partialText;
  return JSON.stringify(args) ?? '';
}
