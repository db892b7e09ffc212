import { isRecord } from '../util/validate.js';
import { escapePointer, localDefinition } from './schemaKeywords.js';
import { JSON_TYPES } from './vetSchema.js';

/**
 * Where a JSON Schema breaks the rules of JSON Schema itself (2020-12, with draft-07's `items` arrays,
 * `additionalItems` and `definitions`), and how: the first such place, as a JSON Pointer and a reason,
 * or `undefined` for a well-formed schema. Checked are the keywords whose values toolstream or zod
 * read: every place a subschema goes, `type`, `pattern` (and `patternProperties` keys), `$ref`,
 * `required`, `enum`, `dependentRequired` and the numeric bounds. A regular expression is malformed
 * when it compiles neither with nor without the `u` flag.
 *
 * An output schema is used to check the values a server sends back; a malformed one cannot say what
 * it accepts, so its tool is not offered (an input schema is relaxed instead: the server checks its
 * own input). Walks every subschema once, without recursion: a deep schema cannot overflow the stack.
 *
 * @example
 * ```ts
 * findMalformation({ type: 'object', properties: { n: { type: 'integr' } } }); // '/properties/n/type: "integr" is not a JSON type'
 * findMalformation({ type: 'object', properties: { n: { type: 'integer' } } }); // undefined
 * ```
 */
export function findMalformation(root: unknown): string | undefined {
  const seen = new Set<object>();
  const stack: [unknown, string][] = [[root, '']];
  while (stack.length > 0) {
    const [schema, pointer] = stack.pop()!;
    if (typeof schema === 'boolean') continue;
    if (!isRecord(schema)) return `${at(pointer)}a schema must be an object or a boolean`;
    if (seen.has(schema)) continue;
    seen.add(schema);
    for (const [key, value] of Object.entries(schema)) {
      const place = `${pointer}/${escapePointer(key)}`;
      const problem = keywordProblem(key, value, root);
      if (problem !== undefined) return `${at(place)}${problem}`;
      if (SINGLE.has(key)) stack.push([value, place]);
      else if (LISTS.has(key) || (key === 'items' && Array.isArray(value))) {
        (value as unknown[]).forEach((item, i) => stack.push([item, `${place}/${i}`]));
      } else if (key === 'items') stack.push([value, place]);
      else if (MAPS.has(key)) for (const [name, sub] of Object.entries(value as object)) stack.push([sub, `${place}/${escapePointer(name)}`]);
    }
  }
  return undefined;
}

/** Keywords whose value is one subschema. */
const SINGLE = new Set([
  'additionalItems',
  'additionalProperties',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
  'unevaluatedItems',
  'unevaluatedProperties',
]);
/** Keywords whose value is a non-empty array of subschemas. */
const LISTS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
/** Keywords whose value maps names to subschemas. */
const MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
/** Keywords whose value is a non-negative integer. */
const COUNTS = new Set(['minLength', 'maxLength', 'minItems', 'maxItems', 'minProperties', 'maxProperties', 'minContains', 'maxContains']);
/** Keywords whose value is a number. */
const NUMBERS = new Set(['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum']);

/** What is wrong with one keyword's value, or `undefined`. */
function keywordProblem(key: string, value: unknown, root: unknown): string | undefined {
  if (MAPS.has(key)) {
    if (!isRecord(value)) return 'must be an object of schemas';
    if (key === 'patternProperties') {
      const bad = Object.keys(value).find((pattern) => !compilesSomehow(pattern));
      if (bad !== undefined) return `${JSON.stringify(bad)} is not a regular expression`;
    }
    return undefined;
  }
  if (LISTS.has(key)) return Array.isArray(value) && value.length > 0 ? undefined : 'must be a non-empty array of schemas';
  if (COUNTS.has(key)) return Number.isInteger(value) && (value as number) >= 0 ? undefined : 'must be a non-negative integer';
  if (NUMBERS.has(key)) return typeof value === 'number' && Number.isFinite(value) ? undefined : 'must be a number';
  switch (key) {
    case 'type':
      return typeProblem(value);
    case 'pattern':
      return typeof value === 'string' && compilesSomehow(value) ? undefined : `${show(value)} is not a regular expression`;
    case '$ref':
      return refProblem(value, root);
    case 'required':
      return isStringArray(value) ? undefined : 'must be an array of strings';
    case 'enum':
      return Array.isArray(value) ? undefined : 'must be an array';
    case 'multipleOf':
      return typeof value === 'number' && value > 0 && Number.isFinite(value) ? undefined : 'must be a number above 0';
    case 'uniqueItems':
      return typeof value === 'boolean' ? undefined : 'must be a boolean';
    case 'dependentRequired':
      return isRecord(value) && Object.values(value).every(isStringArray) ? undefined : 'must be an object of arrays of strings';
    default:
      return undefined;
  }
}

function typeProblem(value: unknown): string | undefined {
  const names = typeof value === 'string' ? [value] : Array.isArray(value) && value.length > 0 ? value : undefined;
  if (names === undefined) return 'must be a JSON type or a non-empty array of them';
  const unknown = names.find((name) => typeof name !== 'string' || !JSON_TYPES.has(name));
  return unknown === undefined ? undefined : `${show(unknown)} is not a JSON type`;
}

/** A `$ref` must be a string; a local definition it names must exist (other references may be resolved elsewhere). */
function refProblem(value: unknown, root: unknown): string | undefined {
  if (typeof value !== 'string') return 'must be a string';
  const definition = localDefinition(value);
  if (definition === undefined || !isRecord(root)) return undefined;
  const defs = root[definition.keyword];
  return isRecord(defs) && Object.hasOwn(defs, definition.name) ? undefined : `${JSON.stringify(value)} names no definition of the schema`;
}

function compilesSomehow(pattern: string): boolean {
  for (const flags of ['u', '']) {
    try {
      new RegExp(pattern, flags);
      return true;
    } catch {
      // try the other reading
    }
  }
  return false;
}

function isStringArray(value: unknown): boolean {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}

function show(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 59)}…` : text;
}

function at(pointer: string): string {
  return pointer === '' ? '' : `${pointer}: `;
}
