import * as z from 'zod';
import type { $ZodType } from 'zod/v4/core';
import { isRecord } from '../util/validate.js';
import { defineValue, exceedsLimits, vetSchema, type ArgsLimits, type Excess, type JsonSchemaObject } from './vetSchema.js';

export type { ArgsLimits, JsonSchemaObject } from './vetSchema.js';

/**
 * The defaults of `mcpTools`, measured on zod 4.6 (`npm run bench:full`, bench/mcp.ts): zod takes up to
 * about 2.5 µs for a value that fails and builds its issue, so 2 Ki evaluations are about 5 ms; a
 * pattern search step takes about 1–4 ns, so 1 Mi steps are a few milliseconds too.
 */
export const DEFAULT_ARGS_LIMITS: ArgsLimits = Object.freeze({ maxArgsLength: 1_048_576, maxArgsValues: 2_048, maxArgsDepth: 64 });

/** A tool's `inputSchema` compiled into the zod schema its pipeline tool validates with. */
export interface CompiledInput {
  /**
   * Validates without transforming: the output is the input, exactly as the model sent it (no
   * defaults filled in, no keys stripped), so the server receives what the schema was checked against.
   * Its JSON Schema form (`toolSchemas`) is the server's schema as listed.
   */
  readonly schema: $ZodType;
  /**
   * JSON Pointers of the assertions that are not checked before the call (keywords zod cannot express,
   * references that do not resolve locally, regular expressions JavaScript cannot compile or that could
   * take more than linear time, compositions whose validation work would multiply). Each one only widens
   * what is accepted: nothing the server's schema accepts is ever rejected — except arguments beyond the
   * size and depth limits. The server still validates its own input.
   */
  readonly relaxed: readonly string[];
  /**
   * The limits the arguments are checked against: the caller's, divided by the schema's cost per
   * value and per character when it is more than one (see `boundCost`).
   */
  readonly limits: ArgsLimits;
}

/** The arguments of an MCP call are always an object (`arguments: Record<string, unknown>`). */
const ARGUMENTS_OBJECT = z.looseObject({});

/**
 * Compiles an MCP tool's `inputSchema` into a zod schema with `z.fromJSONSchema` (zod ≥ 4.2).
 *
 * Validation follows JSON Schema rather than zod's parsing: the arguments must be an object, and the
 * compiled schema only checks them. Where zod and JSON Schema disagree, the schema is relaxed first so
 * that validation never rejects arguments the server's schema accepts:
 * - `format` is an annotation (the JSON Schema 2020-12 default), not checked: zod's formats are
 *   stricter than the standard ones (`uri-reference` would reject relative references, `uuid` checks
 *   version bits, `email` rejects valid RFC 5321 addresses).
 * - `not`, `if`/`then`/`else`, `dependentSchemas`, `dependentRequired`, `unevaluated*`, a `$ref` that
 *   is not local, an `enum`/`const` with object or array values (zod compares those by identity), a
 *   `pattern` JavaScript cannot compile and an unknown `type` are not checked and listed in `relaxed`.
 *
 * Validation never blocks the event loop for long, whatever the server sent:
 * - a `pattern` (or `patternProperties` key) is checked only when `isLinearPattern` proves that
 *   V8's backtracking engine tests it in linear time; any other is relaxed;
 * - arguments beyond the limits (characters, values, depth) are rejected before anything else is
 *   checked (an issue at the root says which limit);
 * - the schema's cost per value and per character is bounded (see `boundCost`): compositions that
 *   would make zod evaluate one value many times (shared or recursive `$ref`s under `anyOf`/`oneOf`/
 *   `allOf`, `contains`, `patternProperties`, large mixed `enum`s) are relaxed when the factor passes
 *   256, a `$ref` that recurses on one value is dropped, and the limits are divided by what is left,
 *   so that validation does at most `maxArgsValues` evaluations and `maxArgsLength` search steps (a
 *   few milliseconds at the defaults).
 *
 * @throws {Error} when the schema cannot be compiled even so; the tool should then not be offered.
 *
 * @example
 * ```ts
 * const { schema, relaxed } = compileInputSchema({ type: 'object', properties: { q: { type: 'string' } }, required: ['q'] });
 * safeParse(schema, { q: 1 }); // fails with an issue at path ['q']
 * ```
 */
export function compileInputSchema(inputSchema: JsonSchemaObject, limits: ArgsLimits = DEFAULT_ARGS_LIMITS): CompiledInput {
  if (!isRecord(inputSchema)) throw new Error('the input schema is not a JSON object');
  const { validator, relaxed, limits: effective } = vetSchema(inputSchema, limits);

  const schema = z
    .unknown()
    .check((payload) => {
      const excess = exceedsLimits(payload.value, effective);
      if (excess !== undefined) {
        payload.issues.push({ code: 'custom', message: describeExcess(excess), input: undefined, path: [] });
        return;
      }
      const shape = ARGUMENTS_OBJECT.safeParse(payload.value);
      const result = shape.success ? validator.safeParse(payload.value) : shape;
      if (result.success) return;
      for (const issue of result.error.issues) payload.issues.push({ ...issue, input: undefined });
    })
    // What `toolSchemas` offers the model: the server's schema as listed. (zod reads a metadata `id`
    // as a definition name and would move the schema under `$defs`; it identifies nothing here.)
    .meta(withoutKey(inputSchema, 'id'));
  return { schema, relaxed, limits: effective };
}

/** What the model reads when its arguments are beyond a limit. */
function describeExcess({ limit, max }: Excess): string {
  switch (limit) {
    case 'depth':
      return `The arguments are nested more than ${max} levels deep; this tool accepts no deeper values.`;
    case 'values':
      return `The arguments hold more than ${max} values; this tool accepts no more in one call. Send less at once.`;
    case 'length':
      return `The arguments' strings and keys are longer than this tool accepts (${max} characters in all). Send less at once.`;
  }
}

function withoutKey(schema: JsonSchemaObject, key: string): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(schema)) if (name !== key) defineValue(copy, name, value);
  return copy;
}
