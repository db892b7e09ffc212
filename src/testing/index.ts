/**
 * `toolstream/testing` — property-test your own tools and pipelines: fast-check arbitraries of tool
 * calls and of whole model streams per provider (valid, fragmented, hostile), scripted streams parsed by
 * the official SDKs, a checker of toolstream's invariants you run on your own runs, and helpers for
 * marble tests (`statusMarbles`, `answerIn`, `bodyTaking`, `resetRateLimits`). Needs
 * `fast-check` 4 (an optional peer dependency: `npm install --save-dev fast-check`); `scriptedStream`
 * also needs the provider's SDK (`@anthropic-ai/sdk` or `openai`), loaded only when used.
 *
 * @example
 * ```ts
 * import fc from 'fast-check';
 * import { fromAnthropicStream } from 'toolstream/anthropic';
 * import { anthropicStreams, checkInvariants, invariantMonitor, scriptedStream, toolCalls } from 'toolstream/testing';
 *
 * const calls = toolCalls({ tools: { read_file: fc.record({ path: fc.string() }) }, hostile: true });
 * await fc.assert(
 *   fc.asyncProperty(anthropicStreams({ calls, mode: 'fragmented' }), async (stream) => {
 *     const monitor = invariantMonitor();
 *     const pipeline = createPipeline({ tools, execute: [monitor.execute] });
 *     const received: ToolCall[] = [];
 *     const results = await pipeline.run(fromAnthropicStream(scriptedStream('anthropic', stream.events)).pipe(tap((c) => received.push(c))));
 *     expect(checkInvariants({ calls: received, results, log: monitor.log, tools, concurrency: 8 })).toEqual({ ok: true });
 *   }),
 * );
 * ```
 *
 * @packageDocumentation
 */

// Arbitraries: tool calls, and whole model streams per provider
export { toolCalls } from './arbitraries/toolCalls.js';
export type { ToolCallsOptions } from './arbitraries/toolCalls.js';
export { jsonFragments } from './arbitraries/fragments.js';
export type { JsonFragmentsOptions } from './arbitraries/fragments.js';
export { anthropicStreams } from './arbitraries/anthropic.js';
export { chatStreams } from './arbitraries/openaiChat.js';
export { responsesStreams } from './arbitraries/openaiResponses.js';
export type { ModelStream, ModelStreamOptions, StreamMode } from './arbitraries/modelStream.js';

// Scripted streams: SSE bodies, parsed by the official SDKs
export { streamedResponse, toSSE } from './scripted/sse.js';
export type { WireFormat } from './scripted/sse.js';
export { scriptedStream } from './scripted/scriptedStream.js';
export type { ScriptedEvent, ScriptedStreamOptions } from './scripted/scriptedStream.js';

// Invariants
export { checkInvariants } from './invariants/checkInvariants.js';
export type { InvariantInput } from './invariants/checkInvariants.js';
export { invariantMonitor } from './invariants/monitor.js';
export type { InvariantMonitor, MonitorEntry, MonitorLog } from './invariants/monitor.js';
export type { InvariantReport, InvariantViolation, InvariantViolationCode } from './invariants/violations.js';

// Marble tests: results as strings, answers and bodies that take virtual frames
export { answerIn, bodyTaking, statusMarbles } from './marbles.js';

// Rate limits: one bucket per scheduler; the default scheduler's is shared by every test
export { resetRateLimits } from '../tool/schedule/rateLimiter.js';

// Errors
export { MissingSdkError, TestingOptionError } from './errors.js';
export type { TestingError, TestingFunction } from './errors.js';
