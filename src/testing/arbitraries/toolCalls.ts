import fc from 'fast-check';
import type { ToolCall } from '../../types/toolCall.js';
import { TestingOptionError } from '../errors.js';
import { hostileCall, type HostileDraft } from './hostileCalls.js';
import { isArbitrary } from './modelStream.js';

/**
 * What `toolCalls` generates: which tools a model may call, with what arguments, and whether the
 * model misbehaves.
 *
 * @example
 * ```ts
 * const options: ToolCallsOptions = {
 *   tools: { read_file: fc.record({ path: fc.string() }), search: fc.record({ query: fc.string(), limit: fc.nat(50) }) },
 *   hostile: true,
 *   maxLength: 12,
 * };
 * ```
 */
export interface ToolCallsOptions {
  /** Each tool's name, and the arguments a well-behaved model sends it (parsed values, e.g. `fc.record`). */
  readonly tools: Readonly<Record<string, fc.Arbitrary<unknown>>>;
  /**
   * Mix in calls a careless or hostile model sends (about one call in three): see {@link toolCalls}.
   * @default false
   */
  readonly hostile?: boolean;
  /** @default 0 */
  readonly minLength?: number;
  /** @default 8 */
  readonly maxLength?: number;
}

/**
 * Batches of tool calls as a model emits them, in model order, each with its own id (`call_…`): a
 * tool's name and arguments from its arbitrary (a parsed value, as Anthropic's SDK gives them).
 *
 * With `hostile: true`, about one call in three is one the pipeline must answer with a structured
 * result (never a crash, never a body run with bad input), one of:
 * - an unknown name (`'__proto__'`, `'constructor'`, `''`, any string no tool has) → `unknown_tool`;
 * - arguments that are not JSON (`'{"a":'`, `"{'a':1}"`, a valid text cut short) → `invalid_json`;
 * - the id of an earlier call of the batch → `duplicate_id`;
 * - `__proto__` or `constructor.prototype` keys added to valid arguments (JSON text) → validated as
 *   any key is (`ok` or `invalid_args`, as the tool's schema says), and no prototype is polluted;
 * - huge arguments (50–200 KB of text) → `ok` or `invalid_args`, as the schema says;
 * - arguments nested 100–5000 levels deep → `invalid_args` (`ok` for a schema that takes them), or
 *   `invalid_json` where they are too deep for the intake to copy;
 * - arguments that are no object (`null`, `42`, `'text'`, `[1, 2]`, as values or JSON text) →
 *   `invalid_args` for an object schema.
 * The hostile arguments are JSON text (a string), as stream adapters hand them over.
 *
 * @param options The tools and their arguments' arbitraries; `hostile`; the batch's length.
 * @throws {TestingOptionError} when `tools` is empty or holds something that is not an arbitrary.
 *
 * @example
 * ```ts
 * import fc from 'fast-check';
 * import { checkInvariants, toolCalls } from 'toolstream/testing';
 *
 * await fc.assert(
 *   fc.asyncProperty(toolCalls({ tools: { read_file: fc.record({ path: fc.string() }) }, hostile: true }), async (calls) => {
 *     const results = await pipeline.run(calls);
 *     expect(checkInvariants({ calls, results, tools, concurrency: 4 })).toEqual({ ok: true });
 *   }),
 * );
 * ```
 */
export function toolCalls(options: ToolCallsOptions): fc.Arbitrary<ToolCall[]> {
  const tools = checkTools(options?.tools);
  const minLength = checkLength('minLength', options.minLength ?? 0);
  const maxLength = checkLength('maxLength', options.maxLength ?? Math.max(8, minLength));
  if (maxLength < minLength) throw new TestingOptionError('toolCalls', 'maxLength', `at least minLength (${minLength})`, maxLength);

  const names = Object.keys(tools);
  const valid: fc.Arbitrary<HostileDraft> = fc.oneof(...names.map((name) => tools[name]!.map((args): HostileDraft => ({ kind: 'valid', name, args }))));
  const draft = options.hostile === true ? fc.oneof({ weight: 6, arbitrary: valid }, { weight: 3, arbitrary: hostileCall(tools, valid) }) : valid;
  return fc.tuple(fc.array(draft, { minLength, maxLength }), fc.stringMatching(/^[A-Za-z0-9]{10}$/)).map(([drafts, stem]) => {
    const ids: string[] = [];
    return drafts.map((call, i) => {
      const id = call.kind === 'duplicate_id' && i > 0 ? ids[call.of % i]! : `call_${stem}${i}`;
      ids.push(id);
      return { id, name: call.name, args: call.args };
    });
  });
}

function checkTools(tools: unknown): Readonly<Record<string, fc.Arbitrary<unknown>>> {
  if (typeof tools !== 'object' || tools === null || Object.keys(tools).length === 0) {
    throw new TestingOptionError('toolCalls', 'tools', 'an object with at least one tool name mapped to an arbitrary of its arguments', tools);
  }
  for (const [name, arbitrary] of Object.entries(tools)) {
    if (!isArbitrary(arbitrary)) throw new TestingOptionError('toolCalls', `tools.${name}`, 'a fast-check arbitrary of the arguments', arbitrary);
  }
  return tools as Readonly<Record<string, fc.Arbitrary<unknown>>>;
}

function checkLength(option: 'minLength' | 'maxLength', value: unknown): number {
  if (!Number.isInteger(value) || (value as number) < 0) throw new TestingOptionError('toolCalls', option, 'a non-negative integer', value);
  return value as number;
}
