import { isRecord } from '../util/validate.js';
import { findMalformation } from './malformedSchema.js';
import type { McpOutputProblem } from './types.js';
import { exceedsLimits, vetSchema, type ArgsLimits } from './vetSchema.js';

/**
 * The output defaults of `mcpTools` (`maxOutputLength`, `maxOutputValues`, `maxOutputDepth`): results
 * are larger than arguments, so the budgets are too. zod takes about 1–2.5 µs for a value that fails
 * (0.1–0.9 µs for one that passes), so 16 Ki evaluations are at most a few tens of milliseconds, about
 * what parsing a message that large costs; 16 Mi pattern steps at 1–4 ns each are of the same order.
 */
export const DEFAULT_OUTPUT_LIMITS: ArgsLimits = Object.freeze({ maxArgsLength: 16_777_216, maxArgsValues: 16_384, maxArgsDepth: 64 });

/** The option that sets each limit, for messages. */
const OPTION = { length: 'maxOutputLength', values: 'maxOutputValues', depth: 'maxOutputDepth' } as const;

/** A tool's `outputSchema`, compiled to check the structured content of its results. */
export interface CompiledOutput {
  /**
   * JSON Pointers into the output schema of the assertions that are not checked (as for input schemas:
   * what zod cannot express, patterns not provably linear, compositions whose work would multiply).
   * Each only widens what is accepted.
   */
  readonly relaxed: readonly string[];
  /** What is wrong with a result's structured content (`undefined` when there is none), or `undefined` if nothing. */
  check(structured: unknown): McpOutputProblem | undefined;
}

/**
 * Compiles an MCP tool's `outputSchema` with the vetting input schemas get (see `vetSchema`), so that
 * checking a result never blocks the event loop for long: only patterns that provably test in linear
 * time are checked, compositions whose work would multiply are relaxed, and structured content beyond
 * the limits (divided by the schema's cost) is refused before anything else is checked.
 *
 * Unlike an input schema, a malformed one is not relaxed but refused (see {@link findMalformation}):
 * it is the contract a host relies on when it reads the value, and the server does not check it for
 * anyone. The root must be an object schema (`"type": "object"`), as MCP requires.
 *
 * @throws {Error} when the schema is malformed, or zod cannot compile it; the tool should then not be offered.
 *
 * @example
 * ```ts
 * const output = compileOutputSchema({ type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] });
 * output.check({ n: 'one' }); // { reason: 'mismatch', issues: [{ path: ['n'], code: 'invalid_type', message: '…' }] }
 * output.check({ n: 1 }); // undefined
 * ```
 */
export function compileOutputSchema(outputSchema: unknown, limits: ArgsLimits = DEFAULT_OUTPUT_LIMITS): CompiledOutput {
  if (!isRecord(outputSchema) || outputSchema['type'] !== 'object') throw new Error('it is not an object schema ("type": "object")');
  const malformation = findMalformation(outputSchema);
  if (malformation !== undefined) throw new Error(malformation);
  const { validator, relaxed, limits: effective } = vetSchema(outputSchema, limits);
  return {
    relaxed,
    check(structured) {
      if (structured === undefined) return { reason: 'missing' };
      const excess = exceedsLimits(structured, effective);
      if (excess !== undefined) return { reason: 'too_large', limit: OPTION[excess.limit], max: excess.max };
      const result = validator.safeParse(structured);
      if (result.success) return undefined;
      return { reason: 'mismatch', issues: result.error.issues.map(({ path, code, message }) => ({ path, code, message })) };
    },
  };
}
