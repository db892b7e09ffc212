import { safeParse, toJSONSchema } from 'zod/v4/core';
import { describe, expect, it } from 'vitest';
import { compileInputSchema, DEFAULT_ARGS_LIMITS } from '../../src/mcp/inputSchema.js';
import { mcpTools, type McpClient } from '../../src/mcp/index.js';
import { stretched } from '../support/timing.js';

const check = (schema: Record<string, unknown>, value: unknown) => {
  const result = safeParse(compileInputSchema(schema).schema, value);
  return result.success ? 'ok' : result.error.issues.map((issue) => issue.path.join('.') || '(root)');
};

describe('compileInputSchema', () => {
  it('resolves draft-07 definitions as well as 2020-12 $defs', () => {
    const draft7 = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      definitions: { Id: { type: 'integer', minimum: 1 } },
      properties: { id: { $ref: '#/definitions/Id' } },
      required: ['id'],
    };
    expect(check(draft7, { id: 3 })).toBe('ok');
    expect(check(draft7, { id: 0 })).toEqual(['id']);
    expect(compileInputSchema(draft7).relaxed).toEqual([]);
  });

  it('leaves unresolvable references, unknown types and uncompilable patterns unchecked, and lists them', () => {
    const { relaxed } = compileInputSchema({
      type: 'object',
      properties: {
        a: { $ref: 'https://example.test/schema.json' },
        b: { $ref: '#/$defs/Missing' },
        c: { type: 'file' },
        d: { type: ['string', 'blob'] },
        e: { type: 'string', pattern: '(unclosed' },
      },
    });
    expect(relaxed).toEqual(['/properties/a/$ref', '/properties/b/$ref', '/properties/c/type', '/properties/e/pattern']);
    const schema = { type: 'object', properties: { c: { type: 'file' }, d: { type: ['string', 'blob'] } } };
    expect(check(schema, { c: { any: 'thing' }, d: 'text' })).toBe('ok');
    expect(check(schema, { d: 5 })).toEqual(['d']);
  });

  it('drops additionalProperties beside a patternProperties entry it could not compile, so no valid key is rejected', () => {
    const schema = {
      type: 'object',
      patternProperties: { '^x-': { type: 'string' }, '([bad': { type: 'number' } },
      additionalProperties: false,
    };
    expect(compileInputSchema(schema).relaxed).toEqual(['/patternProperties/([bad', '/additionalProperties']);
    expect(check(schema, { 'x-a': 'ok', '([bad-key': 1 })).toBe('ok');
    expect(check(schema, { 'x-a': 1 })).toEqual(['x-a']);
  });

  it('checks without transforming, and offers the schema as listed (a root `id` does not move it under $defs)', () => {
    const listed = { type: 'object', id: 'urn:tool', properties: { n: { type: 'integer', default: 3 } }, additionalProperties: false };
    const { schema } = compileInputSchema(listed);
    const result = safeParse(schema, {});
    expect(result).toMatchObject({ success: true, data: {} });
    const { $schema: _ignored, ...offered } = toJSONSchema(schema, { io: 'input' }) as Record<string, unknown>;
    expect(offered).toEqual({ type: 'object', properties: { n: { type: 'integer', default: 3 } }, additionalProperties: false });
  });

  it('keeps property names that look like keywords as names', () => {
    const schema = { type: 'object', properties: { not: { type: 'string' }, format: { type: 'string' }, if: { type: 'boolean' } }, required: ['not'] };
    expect(compileInputSchema(schema).relaxed).toEqual([]);
    expect(check(schema, { not: 1, format: 2, if: 'no' })).toEqual(['not', 'format', 'if']);
  });
});

describe('mcpTools listing', () => {
  const page = (names: string[], nextCursor?: string) => ({
    tools: names.map((name) => ({ name, inputSchema: { type: 'object' as const } })),
    ...(nextCursor !== undefined && { nextCursor }),
  });
  const fake = (pages: ReturnType<typeof page>[]) =>
    ({ request: async () => pages.shift() ?? page([]) }) as unknown as McpClient;

  it('stops at an empty cursor, and rejects a cursor that repeats', async () => {
    expect((await mcpTools(fake([page(['a'], 'p2'), page(['b'], '')]))).map((t) => t.name)).toEqual(['a', 'b']);
    await expect(mcpTools(fake([page(['a'], 'p2'), page(['b'], 'p2')]))).rejects.toThrow(/cursor "p2" twice/);
  });
});

it('a pattern with u-only syntax (\\p{…}, \\u{…}) is relaxed, not checked without the u flag (which would reject real letters)', () => {
  const compiled = compileInputSchema({ type: 'object', properties: { s: { type: 'string', pattern: '^\\p{L}+$' } } } as never);
  expect(compiled.relaxed).toEqual(['/properties/s/pattern']);
  expect(safeParse(compiled.schema, { s: "héllo" }).success).toBe(true);
});

describe('compileInputSchema never blocks the event loop', () => {
  /** Validation time in ms; the bounds below are generous: they fail only when a blow-up is back. */
  const timed = (schema: Record<string, unknown>, value: unknown) => {
    const compiled = compileInputSchema(schema);
    const started = performance.now();
    const result = safeParse(compiled.schema, value);
    return { ms: performance.now() - started, ok: result.success, relaxed: compiled.relaxed };
  };

  it('relaxes the issue’s pattern ^([a-z]+)+$ (exponential in V8) and checks a linear one', () => {
    const schema = { type: 'object', properties: { slug: { type: 'string', pattern: '^([a-z]+)+$' }, id: { type: 'string', pattern: '^[a-z]+(-[a-z]+)*$' } } };
    // 28 letters and a `!`: about 10 s of backtracking per call before the fix.
    const run = timed(schema, { slug: `${'a'.repeat(28)}!`, id: 'abc-def' });
    expect(run.relaxed).toEqual(['/properties/slug/pattern']);
    expect(run.ok).toBe(true);
    expect(run.ms).toBeLessThan(stretched(1_000));
    expect(check(schema, { id: 'abc-' })).toEqual(['id']);
  });

  it('relaxes an unanchored pattern whose search is quadratic, in patternProperties and propertyNames too', () => {
    const schema = {
      type: 'object',
      properties: { code: { type: 'string', pattern: '[a-z]+[0-9]' } },
      patternProperties: { '^(x+)+$': { type: 'string' }, '^x-[a-z]+$': { type: 'number' } },
      propertyNames: { pattern: '^(\\w+\\s?)*$' },
      additionalProperties: false,
    };
    const run = timed(schema, { code: 'a'.repeat(100_000), [`${'x'.repeat(28)}!`]: 'v' });
    expect(run.relaxed).toEqual(['/properties/code/pattern', '/patternProperties/^(x+)+$', '/propertyNames/pattern', '/additionalProperties']);
    expect(run.ms).toBeLessThan(stretched(1_000));
    expect(check(schema, { 'x-a': 'not a number' })).toEqual(['x-a']); // the linear key pattern is still checked
  });

  it('relaxes anyOf chains over shared definitions that would evaluate one value 2^n times', () => {
    const $defs: Record<string, unknown> = {};
    for (let i = 0; i < 24; i++) $defs[`A${i}`] = { anyOf: [{ $ref: `#/$defs/A${i + 1}` }, { $ref: `#/$defs/A${i + 1}` }] };
    $defs['A24'] = { type: 'object', properties: { x: { type: 'string' } }, required: ['x'] };
    // 1.4 KB of schema; before the fix one call took minutes.
    const run = timed({ type: 'object', $defs, properties: { v: { $ref: '#/$defs/A0' } } }, { v: {} });
    expect(run.relaxed).toEqual(['/$defs/A0/anyOf']);
    expect(run.ms).toBeLessThan(stretched(1_000));
  });

  it('relaxes a recursive union that doubles per level, keeps a recursive schema that does not, and drops a self-recursion', () => {
    const doubling = { type: 'object', properties: { a: { oneOf: [{ $ref: '#' }, { type: 'object', properties: { a: { $ref: '#' } } }] } } };
    let deep: Record<string, unknown> = { a: 1 };
    for (let i = 0; i < 40; i++) deep = { a: deep };
    const run = timed(doubling, deep);
    expect(run.relaxed).toEqual(['/properties/a/oneOf']);
    expect(run.ms).toBeLessThan(stretched(1_000));

    const tree = {
      type: 'object',
      $defs: { Node: { type: 'object', properties: { children: { type: 'array', items: { anyOf: [{ type: 'string' }, { $ref: '#/$defs/Node' }] } } } } },
      properties: { root: { $ref: '#/$defs/Node' } },
    };
    expect(compileInputSchema(tree).relaxed).toEqual([]);
    expect(check(tree, { root: { children: ['a', { children: [3] }] } })).toEqual(['root.children.1']); // still checked

    const endless = timed({ anyOf: [{ $ref: '#' }] }, {});
    expect(endless.relaxed).toEqual(['/anyOf/0/$ref']);
    expect(endless.ok).toBe(true);
  });

  it('rejects arguments beyond the limits before checking anything else', () => {
    const schema = { type: 'object', properties: { text: { type: 'string' }, tree: {} } };
    const { schema: compiled, limits } = compileInputSchema(schema, { maxArgsLength: 1_000, maxArgsValues: 50, maxArgsDepth: 8 });
    expect(limits).toEqual({ maxArgsLength: 1_000, maxArgsValues: 50, maxArgsDepth: 8 });
    let deep: unknown = 1;
    for (let i = 0; i < 7; i++) deep = [deep]; // under `tree` (depth 1), the 1 sits at depth 8
    const issues = (value: unknown) => {
      const result = safeParse(compiled, value);
      return result.success ? 'ok' : result.error.issues.map((issue) => issue.message);
    };
    expect(issues({ text: 'x'.repeat(996) })).toBe('ok'); // 4 for the key
    expect(issues({ text: 'x'.repeat(997) })).toEqual([expect.stringMatching(/strings and keys are longer than this tool accepts \(1000 characters in all\)/)]);
    expect(issues({ tree: deep })).toBe('ok');
    expect(issues({ tree: [deep] })).toEqual([expect.stringMatching(/nested more than 8 levels deep/)]);
    expect(issues({ tree: Array.from({ length: 48 }, () => 0) })).toBe('ok'); // 50 values with the object and the array
    expect(issues({ tree: Array.from({ length: 49 }, () => 0) })).toEqual([expect.stringMatching(/more than 50 values/)]);
  });

  it('lowers the limits of a schema that costs more per value or per character', () => {
    const failing = { type: 'object', properties: { x: { type: 'string' } }, required: ['x'] };
    const union = compileInputSchema({ type: 'object', properties: { items: { type: 'array', items: { anyOf: [failing, failing, failing] } } } });
    expect(union.relaxed).toEqual([]);
    expect(union.limits.maxArgsValues).toBe(512); // 2 Ki evaluations / 4 per item (the union and its three members)
    const unanchored = compileInputSchema({ type: 'object', properties: { s: { type: 'string', pattern: '[ab]{7}' } } });
    expect(unanchored.limits.maxArgsLength).toBe(131_072); // 1 Mi steps / 8 per character
    expect(compileInputSchema({ type: 'object', properties: { s: { type: 'string', pattern: '^[a-z]+$' } } }).limits).toEqual(DEFAULT_ARGS_LIMITS);
  });
});
