import { brand } from '../util/brand.js';
import { describeValue } from '../util/describe.js';

/**
 * The functions of `toolstream/testing` that check what they are given (a `TestingOptionError`'s `where`).
 *
 * @example
 * ```ts
 * const where: TestingFunction = 'checkInvariants';
 * ```
 */
export type TestingFunction =
  | 'toolCalls'
  | 'jsonFragments'
  | 'anthropicStreams'
  | 'chatStreams'
  | 'responsesStreams'
  | 'toSSE'
  | 'streamedResponse'
  | 'scriptedStream'
  | 'checkInvariants'
  | 'answerIn'
  | 'bodyTaking';

/**
 * An option of a `toolstream/testing` function was wrong: the message names the function, the option,
 * what was expected and what was given. Thrown when the arbitrary or check is built, before any run.
 *
 * @example
 * ```ts
 * try {
 *   checkInvariants({ calls, results, tools, concurrency: 0 });
 * } catch (error) {
 *   if (error instanceof TestingOptionError) console.error(error.option); // 'concurrency'
 * }
 * ```
 */
export class TestingOptionError extends TypeError {
  static {
    brand(this, 'TestingOptionError');
  }

  readonly code = 'invalid_option' as const;

  constructor(
    /** The function that rejected the option. */
    readonly where: TestingFunction,
    /** The option at fault, e.g. `concurrency` or `calls[2].args`. */
    readonly option: string,
    expected: string,
    received: unknown,
  ) {
    super(`${where}: \`${option}\` must be ${expected}; received ${describeValue(received)}`);
    this.name = 'TestingOptionError';
  }
}

/**
 * `scriptedStream` parses with the provider's official SDK, an optional peer dependency loaded on
 * first use: iterating the stream rejects with this when the SDK is not installed. `packageName` is
 * what to install.
 *
 * @example
 * ```ts
 * try {
 *   for await (const event of scriptedStream('anthropic', events)) use(event);
 * } catch (error) {
 *   if (error instanceof MissingSdkError) console.error(`npm install --save-dev ${error.packageName}`);
 * }
 * ```
 */
export class MissingSdkError extends Error {
  static {
    brand(this, 'MissingSdkError');
  }

  readonly code = 'sdk_missing' as const;

  constructor(
    /** The npm package to install: `@anthropic-ai/sdk` or `openai`. */
    readonly packageName: '@anthropic-ai/sdk' | 'openai',
    cause: unknown,
  ) {
    super(`scriptedStream needs the official SDK's SSE parser: install ${packageName} (npm install --save-dev ${packageName})`, { cause });
    this.name = 'MissingSdkError';
  }
}

/**
 * What `toolstream/testing` throws or rejects with, discriminated on `code`.
 *
 * @example
 * ```ts
 * function explain(error: TestingError): string {
 *   return error.code === 'sdk_missing' ? `install ${error.packageName}` : `fix ${error.where}'s ${error.option}`;
 * }
 * ```
 */
export type TestingError = TestingOptionError | MissingSdkError;
