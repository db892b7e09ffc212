import type { ResponseErrorEvent, ResponseFailedEvent } from 'openai/resources/responses/responses';
import { isObject } from '../../util/validate.js';
import { brand } from '../../util/brand.js';

/**
 * The error `fromOpenAIResponsesStream` fails with when the stream itself reports a failure: an
 * `error` event or a `response.failed` event. (An error thrown by the source — a broken connection, an
 * `APIError` from the SDK — is forwarded as thrown.) Calls still open at that point were emitted as
 * incomplete first.
 *
 * @example
 * ```ts
 * try {
 *   await pipeline.run(fromOpenAIResponsesStream(stream));
 * } catch (error) {
 *   if (error instanceof SourceError && error.cause instanceof OpenAIResponsesStreamError) {
 *     console.warn(error.cause.code, error.cause.message);
 *     answer(toOpenAIResponsesInput(error.results));
 *   }
 * }
 * ```
 */
export class OpenAIResponsesStreamError extends Error {
  static {
    brand(this, 'OpenAIResponsesStreamError');
  }

  /** The provider's error code (e.g. `'server_error'`), when it gave one. */
  readonly code: string | null;

  constructor(
    /** The event that reported the failure. */
    readonly event: ResponseErrorEvent | ResponseFailedEvent,
  ) {
    const { code, message } = describeFailure(event);
    super(`${event.type === 'error' ? 'OpenAI stream error' : 'OpenAI response failed'}${code === null ? '' : ` (${code})`}: ${message}`);
    this.name = 'OpenAIResponsesStreamError';
    this.code = code;
  }
}

function describeFailure(event: ResponseErrorEvent | ResponseFailedEvent): { code: string | null; message: string } {
  const source: unknown = event.type === 'error' ? event : (event.response as { error?: unknown } | undefined)?.error;
  if (!isObject(source)) return { code: null, message: 'no details given' };
  const { code, message } = source;
  return {
    code: typeof code === 'string' ? code : null,
    message: typeof message === 'string' && message !== '' ? message : 'no details given',
  };
}
