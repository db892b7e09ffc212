/**
 * Where a JSON Schema holds subschemas, and how to name a place in it: shared by the relaxer
 * (`inputSchema.ts`) and the cost analysis (`schemaCost.ts`), which walk the same structure.
 */

/** Keywords whose value is a schema, or an array of schemas. */
export const SCHEMA_KEYWORDS: ReadonlySet<string> = new Set([
  'items',
  'prefixItems',
  'additionalItems',
  'additionalProperties',
  'contains',
  'propertyNames',
  'allOf',
  'anyOf',
  'oneOf',
]);

/** Keywords whose value maps names to schemas. */
export const SCHEMA_MAPS: ReadonlySet<string> = new Set(['properties', 'patternProperties', '$defs', 'definitions']);

/**
 * A key as a JSON Pointer segment (RFC 6901: `~` → `~0`, `/` → `~1`).
 *
 * @example
 * ```ts
 * escapePointer('a/b~c'); // 'a~1b~0c'
 * ```
 */
export function escapePointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

/**
 * The definitions keyword and the definition's name of a local reference `#/$defs/<name>` or
 * `#/definitions/<name>` (its pointer segment unescaped), or `undefined` for any other reference.
 *
 * @example
 * ```ts
 * localDefinition('#/$defs/Node'); // { keyword: '$defs', name: 'Node' }
 * localDefinition('https://example.test/schema.json'); // undefined
 * ```
 */
export function localDefinition(ref: string): { readonly keyword: '$defs' | 'definitions'; readonly name: string } | undefined {
  const match = /^#\/(\$defs|definitions)\/([^/]+)$/.exec(ref);
  if (match === null) return undefined;
  return { keyword: match[1] as '$defs' | 'definitions', name: match[2]!.replace(/~1/g, '/').replace(/~0/g, '~') };
}
