import fc from 'fast-check';

/** One call of a batch before it gets its id: `of` picks the earlier call whose id a `duplicate_id` reuses. */
export type HostileDraft =
  | { readonly kind: 'valid' | 'unknown_name' | 'bad_json' | 'proto_keys' | 'huge_args' | 'deep_args' | 'non_object_args'; readonly name: string; readonly args: unknown }
  | { readonly kind: 'duplicate_id'; readonly name: string; readonly args: unknown; readonly of: number };

/** Texts that no JSON parser accepts, of the kinds models and broken gateways send. */
const NOT_JSON = ['{', '{"a":', '{"a":1}}', "{'a':1}", '{"a":1,}', 'undefined', 'NaN', '[1,2', '"unterminated', '{"a":tru}', '\u0000'];

/** Keys that pollute a prototype when an object is merged carelessly. */
const POLLUTING = ['"__proto__":{"polluted":"yes"}', '"constructor":{"prototype":{"polluted":"yes"}}'];

/** Arguments that are JSON but no object: as values, and as the JSON text a stream carries. */
const NOT_OBJECTS: readonly unknown[] = [null, 42, 'text', true, [1, 2], '42', '"text"', 'null', '[]', 'true'];

/**
 * One hostile call (see `toolCalls`): its kind, and a name and arguments of that kind. `valid` gives
 * the well-formed calls the hostile ones are made from.
 */
export function hostileCall(tools: Readonly<Record<string, unknown>>, valid: fc.Arbitrary<HostileDraft>): fc.Arbitrary<HostileDraft> {
  const names = Object.keys(tools);
  const known = fc.constantFrom(...names);
  const unknownName = fc
    .oneof(fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty', ''), fc.string({ maxLength: 40 }))
    .filter((name) => !Object.hasOwn(tools, name));
  // A valid call's arguments as JSON text, cut short: what a stream cut off mid-call and never completed leaves.
  const cutShort = fc.tuple(valid, fc.nat()).map(([call, at]) => {
    const text = jsonText(call.args);
    return text.slice(0, at % Math.max(1, text.length));
  });
  // (A blank text is no bad JSON: the intake reads it as `{}`, as providers send it for no arguments.)
  const notJson = fc.oneof(fc.constantFrom(...NOT_JSON), cutShort.filter((text) => text.trim() !== '' && !parses(text)));
  return fc.oneof(
    fc.record({ kind: fc.constant('unknown_name' as const), name: unknownName, args: fc.constantFrom<unknown>({}, '{}') }),
    fc.record({ kind: fc.constant('bad_json' as const), name: known, args: notJson }),
    valid.chain((call) => fc.nat().map((of): HostileDraft => ({ kind: 'duplicate_id', name: call.name, args: call.args, of }))),
    fc.tuple(valid, fc.constantFrom(...POLLUTING)).map(([call, keys]): HostileDraft => ({ kind: 'proto_keys', name: call.name, args: withKeys(call.args, keys) })),
    fc
      .tuple(valid, fc.integer({ min: 50_000, max: 200_000 }))
      .map(([call, size]): HostileDraft => ({ kind: 'huge_args', name: call.name, args: withKeys(call.args, `"padding":"${'x'.repeat(size)}"`) })),
    fc
      .tuple(known, fc.integer({ min: 100, max: 5_000 }), fc.boolean())
      .map(([name, depth, arrays]): HostileDraft => ({ kind: 'deep_args', name, args: arrays ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth) })),
    fc.record({ kind: fc.constant('non_object_args' as const), name: known, args: fc.constantFrom(...NOT_OBJECTS) }),
  );
}

/** The arguments as JSON text: a string is taken as the text itself, as a stream carries it. */
function jsonText(args: unknown): string {
  if (typeof args === 'string') return args;
  try {
    return JSON.stringify(args) ?? '';
  } catch {
    return '';
  }
}

/** JSON text of the arguments with `keys` (JSON members) added first: into the object, or into a new one. */
function withKeys(args: unknown, keys: string): string {
  const text = jsonText(args).trim();
  if (!text.startsWith('{') || !parses(text)) return `{${keys}}`;
  const rest = text.slice(1).trimStart();
  return rest.startsWith('}') ? `{${keys}}` : `{${keys},${rest}`;
}

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
