import { brand } from './brand.js';
import { describeError, describeValue } from './describe.js';
import type { ToolResult } from '../types/toolResult.js';

/**
 * A configuration mistake found when a tool or pipeline is built, before any call runs.
 * The message names the function, the option, what was expected and what was given.
 *
 * @example
 * ```ts
 * try {
 *   createPipeline({ tools, concurrency: 0 });
 * } catch (error) {
 *   if (error instanceof ConfigError) console.error(error.option); // 'concurrency'
 * }
 * ```
 */
export class ConfigError extends TypeError {
  static {
    brand(this, 'ConfigError');
  }

  readonly code = 'invalid_config' as const;

  constructor(
    /** The function that rejected the configuration. */
    readonly where:
      | 'defineTool'
      | 'createPipeline'
      | 'run'
      | 'resume'
      | 'pendingApprovals'
      | 'prune'
      | 'mcpTools'
      | 'sqliteJournal'
      | 'createQuickJSRuntime'
      | 'runCodeTool'
      | 'describeTools'
      | 'openAICustomTools'
      | 'toOpenAIResponsesTools'
      | 'fromOpenAIResponsesStream'
      | 'toOpenAIResponsesInput'
      | 'runOpenAIResponsesTurn'
      | 'continueOpenAIResponsesTurn'
      | 'toolContract'
      | 'implementTool'
      | 'remoteTools'
      | 'createToolWorker'
      | 'setFleetLimits'
      | 'redisJournal'
      | 'postgresJournal'
      | 'renderTimeline'
      | 'terminalProgress'
      | 'toolTracing'
      | 'workerTracing'
      | 'createLimiter'
      | 'createRateLimiter'
      | 'denyTools'
      | 'askTools'
      | 'allowTools'
      | 'pathSandbox'
      | 'RestrictionSet'
      | 'RestrictionSet.extend'
      | 'TextRetainer'
      | 'retainText'
      | 'ItemRetainer'
      | 'stepCountIs'
      | 'runAnthropicLoop'
      | 'runOpenAIChatLoop'
      | 'runOpenAIResponsesLoop'
      | 'runAISDKLoop'
      | 'runAnthropicTurn'
      | 'continueAnthropicTurn'
      | 'runOpenAIChatTurn'
      | 'continueOpenAIChatTurn'
      | 'runAISDKTurn'
      | 'continueAISDKTurn'
      | 'postgresJournalSchema'
      | 'toAnthropicTools',
    /** The option at fault, e.g. `concurrency` or `tools[2].name`. */
    readonly option: string,
    expected: string,
    received: unknown,
  ) {
    super(`${where}: \`${option}\` must be ${expected}; received ${describeValue(received)}`);
    this.name = 'ConfigError';
  }
}

/**
 * `run()` rejects with this when the source of calls errors (a model stream that broke midway), and
 * `operator()` and `events()` error with it. Every call received before the failure still got its
 * result: `run()` and `events()` give them in `results`; `operator()` has already emitted each one
 * downstream, so its `results` is empty (a long-lived subscription keeps no result), and `answered`
 * says how many there were.
 *
 * @example
 * ```ts
 * try {
 *   await pipeline.run(callsFromModel);
 * } catch (error) {
 *   if (error instanceof SourceError) sendToModel(error.results);
 * }
 * ```
 */
export class SourceError extends Error {
  static {
    brand(this, 'SourceError');
  }

  readonly code = 'source_failed' as const;

  constructor(
    /**
     * The results of every call received before the source failed, in input order; empty from
     * `operator()`, whose subscriber has them already.
     */
    readonly results: readonly ToolResult[],
    cause: unknown,
    /** How many calls received before the failure were answered (`results.length`, except from `operator()`). */
    readonly answered: number = results.length,
  ) {
    super(`the source of tool calls failed after ${answered} call(s): ${describeError(cause)}`, { cause });
    this.name = 'SourceError';
  }
}

/** Errors that toolstream throws or rejects with, discriminated on `code`. */
export type ToolstreamError = ConfigError | SourceError;
