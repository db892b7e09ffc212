import { safeParse, toJSONSchema } from 'zod/v4/core';
import { describe, expect, it } from 'vitest';
import { compileInputSchema } from '../../src/mcp/inputSchema.js';
import { mcpTools, type McpClient } from '../../src/mcp/index.js';

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
    ({ listTools: async () => pages.shift() ?? page([]), callTool: async () => ({ content: [] }) }) as unknown as McpClient;

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
