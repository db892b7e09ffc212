import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError, defineTool, type AnyTool } from '../../src/index.js';
import { compileInputSchema, type JsonSchemaObject } from '../../src/mcp/inputSchema.js';
import { describeTools } from '../../src/ptc/describeTools.js';

const readFile = defineTool({
  name: 'read_file',
  description: 'Read a UTF-8 text file',
  input: z.object({
    path: z.string().describe('Path relative to the workspace'),
    encoding: z.enum(['utf8', 'base64']).default('utf8'),
  }),
  execute: () => '',
});

/** A tool whose schema is compiled from JSON Schema, as `mcpTools` builds them. */
function jsonTool(name: string, inputSchema: JsonSchemaObject, description = ''): AnyTool {
  return defineTool({ name, description, input: compileInputSchema(inputSchema).schema, execute: () => '' });
}

const fetchPage = jsonTool(
  'mcp:fetch-page',
  { type: 'object', properties: { url: { type: 'string', format: 'uri' } }, required: ['url'] },
  'Fetch a web page',
);

/** The parameter type of the only method of `describeTools([tool])`. */
function parameterOf(tool: AnyTool): string {
  const match = /^ {2}\S+\(args: ([\s\S]*)\): Promise<unknown>;\n\};$/m.exec(describeTools([tool]));
  return match![1]!;
}

const parameterOfSchema = (schema: JsonSchemaObject): string => parameterOf(jsonTool('t', schema));

// --- The TypeScript compiler, in memory -------------------------------------------------------------

const VIRTUAL = '/virtual';
const libFiles = new Map<string, ts.SourceFile>(); // parsed once for every program

/**
 * The diagnostics of `declarations` and `program` (two script files) compiled in strict mode. The
 * program is the body of an async function, so it may `await tools.x(…)`.
 */
function typeErrors(declarations: string, program: string, options: ts.CompilerOptions = {}): string[] {
  const files = new Map([
    [`${VIRTUAL}/tools.d.ts`, declarations],
    [`${VIRTUAL}/main.ts`, `async function main(): Promise<void> {\n${program}\n}\nvoid main;\n`],
  ]);
  const host: ts.CompilerHost = {
    getSourceFile(fileName, languageVersion) {
      const text = files.get(fileName);
      if (text !== undefined) return ts.createSourceFile(fileName, text, languageVersion, true);
      let lib = libFiles.get(fileName);
      if (lib === undefined) {
        const libText = ts.sys.readFile(fileName);
        if (libText === undefined) return undefined;
        lib = ts.createSourceFile(fileName, libText, languageVersion);
        libFiles.set(fileName, lib);
      }
      return lib;
    },
    getDefaultLibFileName: (compilerOptions) => ts.getDefaultLibFilePath(compilerOptions),
    writeFile: () => {},
    getCurrentDirectory: () => VIRTUAL,
    getCanonicalFileName: (fileName) => fileName,
    useCaseSensitiveFileNames: () => true,
    getNewLine: () => '\n',
    fileExists: (fileName) => files.has(fileName) || ts.sys.fileExists(fileName),
    readFile: (fileName) => files.get(fileName) ?? ts.sys.readFile(fileName),
  };
  const compilerOptions: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2022.d.ts'],
    types: [],
    ...options,
  };
  const compiled = ts.createProgram({ rootNames: [...files.keys()], options: compilerOptions, host });
  return ts.getPreEmitDiagnostics(compiled).map((diagnostic) => {
    const where = diagnostic.file === undefined ? '' : `${path.basename(diagnostic.file.fileName)}: `;
    return where + ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
  });
}

// ---------------------------------------------------------------------------------------------------

describe('describeTools', () => {
  it('declares each tool as a method taking its input schema, with descriptions as doc comments', () => {
    expect(describeTools([readFile, fetchPage])).toBe(
      [
        'declare const tools: {',
        '  /**',
        '   * Read a UTF-8 text file',
        '   */',
        '  read_file(args: {',
        '    /** Path relative to the workspace */',
        '    path: string;',
        '    /** @default "utf8" */',
        '    encoding?: "utf8" | "base64";',
        '  }): Promise<unknown>;',
        '  /**',
        '   * Fetch a web page',
        '   */',
        '  "mcp:fetch-page"(args: { url: string }): Promise<unknown>;',
        '};',
      ].join('\n'),
    );
  });

  it('names the namespace as asked, and declares an empty one for no tools', () => {
    expect(describeTools([], { namespace: 'api' })).toBe('declare const api: {};');
    expect(describeTools([fetchPage], { namespace: 'api' })).toMatch(/^declare const api: \{\n/);
  });

  it('rejects a namespace that is not an identifier, and two tools with one name', () => {
    for (const namespace of ['', 'my-tools', '1tools', 'class', 'undefined']) {
      expect(() => describeTools([readFile], { namespace })).toThrow(ConfigError);
      expect(() => describeTools([readFile], { namespace })).toThrow(/`namespace` must be an identifier/);
    }
    expect(() => describeTools([readFile, readFile])).toThrow('`tools` must be tools with unique names; received "read_file"');
  });

  it('renders the input side of a zod schema: defaults and optionals are optional, nullables take null', () => {
    const tool = defineTool({
      name: 'zod_input',
      description: '',
      input: z.object({
        count: z.number().int().default(1),
        label: z.string().optional(),
        note: z.string().nullable(),
        mode: z.literal('fast'),
      }),
      execute: () => '',
    });
    expect(parameterOf(tool)).toBe(
      ['{', '    /** @default 1 */', '    count?: number;', '    label?: string;', '    note: string | null;', '    mode: "fast";', '  }'].join('\n'),
    );
  });

  it.each<[string, JsonSchemaObject, string]>([
    ['string', { type: 'string' }, 'string'],
    ['number', { type: 'number' }, 'number'],
    ['integer', { type: 'integer' }, 'number'],
    ['boolean', { type: 'boolean' }, 'boolean'],
    ['null', { type: 'null' }, 'null'],
    ['a type array (nullable)', { type: ['string', 'null'] }, 'string | null'],
    ['OpenAPI nullable', { type: 'string', nullable: true }, 'string | null'],
    ['enum', { enum: ['a', 1, null, true] }, '"a" | 1 | null | true'],
    ['const string', { const: 'say "hi"' }, '"say \\"hi\\""'],
    ['const object', { const: { a: [1] } }, '{"a":[1]}'],
    ['an empty enum', { enum: [] }, 'never'],
    ['anyOf', { anyOf: [{ type: 'string' }, { type: 'number' }] }, 'string | number'],
    ['oneOf', { oneOf: [{ const: 1 }, { const: 2 }] }, '1 | 2'],
    [
      'allOf',
      { allOf: [{ properties: { a: { type: 'string' } } }, { anyOf: [{ properties: { b: { type: 'number' } } }, { type: 'null' }] }] },
      '{ a?: string } & ({ b?: number } | null)',
    ],
    ['a union with unknown', { anyOf: [{ type: 'string' }, {}] }, 'unknown'],
    ['array', { type: 'array', items: { type: 'string' } }, 'string[]'],
    ['array of a union', { type: 'array', items: { type: ['string', 'number'] } }, '(string | number)[]'],
    ['array of anything', { type: 'array' }, 'unknown[]'],
    ['nested arrays', { type: 'array', items: { type: 'array', items: { type: 'boolean' } } }, 'boolean[][]'],
    ['closed tuple', { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], items: false, minItems: 2 }, '[string, number]'],
    ['optional elements', { prefixItems: [{ type: 'string' }, { type: ['number', 'null'] }], items: false, minItems: 1 }, '[string, (number | null)?]'],
    ['tuple with rest', { type: 'array', prefixItems: [{ type: 'string' }], items: { type: 'boolean' }, minItems: 1 }, '[string, ...boolean[]]'],
    ['open tuple', { type: 'array', prefixItems: [{ type: 'string' }], minItems: 1 }, '[string, ...unknown[]]'],
    ['draft-7 tuple', { type: 'array', items: [{ type: 'string' }], additionalItems: false, minItems: 1 }, '[string]'],
    ['required and optional properties', { type: 'object', properties: { a: { type: 'string' }, b: { type: 'number' } }, required: ['a'] }, '{ a: string; b?: number }'],
    ['additionalProperties: false', { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false }, '{ a?: string }'],
    ['additionalProperties schema', { type: 'object', additionalProperties: { type: 'number' } }, '{ [key: string]: number }'],
    ['additionalProperties: true', { type: 'object', additionalProperties: true }, '{ [key: string]: unknown }'],
    ['an index beside properties', { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: { type: 'number' } }, '{ a: string; [key: string]: number | string }'],
    ['an index beside optional properties', { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'number' } }, '{ a?: string; [key: string]: number | string | undefined }'],
    ['patternProperties', { type: 'object', patternProperties: { '^x-': { type: 'string' } } }, '{ [key: string]: string }'],
    ['an empty object', { type: 'object' }, '{}'],
    ['no constraint', {}, 'unknown'],
    ['an unknown type', { type: 'bigint' }, 'unknown'],
    ['a keyword TypeScript cannot say', { not: { type: 'string' } }, 'unknown'],
    ['a remote $ref', { $ref: 'https://example.com/schema.json' }, 'unknown'],
    ['a $ref that does not resolve', { $ref: '#/$defs/Missing' }, 'unknown'],
  ])('renders %s', (_feature, schema, expected) => {
    expect(parameterOfSchema(schema)).toBe(expected);
  });

  it('renders boolean schemas: true is unknown, false is never', () => {
    expect(parameterOfSchema({ type: 'object', properties: { any: true, none: false }, required: ['any'] })).toBe('{ any: unknown; none?: never }');
  });

  it('indents nested objects one level per depth, closing each at its opening line', () => {
    const tool = jsonTool('nested', {
      type: 'object',
      properties: {
        outer: {
          type: 'object',
          properties: { inner: { type: 'object', description: 'deep', properties: { leaf: { type: 'string' } } } },
        },
        list: { type: 'array', items: { type: 'object', properties: { item: { type: 'string', description: 'an item' } } } },
      },
    });
    expect(describeTools([tool])).toBe(
      [
        'declare const tools: {',
        '  nested(args: {',
        '    outer?: {',
        '      /** deep */',
        '      inner?: { leaf?: string };',
        '    };',
        '    list?: {',
        '      /** an item */',
        '      item?: string;',
        '    }[];',
        '  }): Promise<unknown>;',
        '};',
      ].join('\n'),
    );
  });

  describe('hostile names and descriptions', () => {
    const hostile = jsonTool(
      'weird.name:1-x',
      {
        type: 'object',
        properties: JSON.parse(
          '{"__proto__": {"type": "string"}, "constructor": {"type": "number"}, "a-b": {"type": "string"}, "1st": {"type": "string"}, ' +
            '"a.b": {"type": "string", "description": "ends */ here\\n*/ again"}, "line\\u2028sep": {"const": "x\\u2029y"}}',
        ) as JsonSchemaObject,
        required: ['__proto__'],
      },
      'Evil */ declare const pwned: 1; /*\nsecond line',
    );

    it('quotes names that are not plain identifiers and escapes comment ends', () => {
      expect(describeTools([hostile])).toBe(
        [
          'declare const tools: {',
          '  /**',
          '   * Evil *\\/ declare const pwned: 1; /*',
          '   * second line',
          '   */',
          '  "weird.name:1-x"(args: {',
          '    "__proto__": string;',
          '    "constructor"?: number;',
          '    "a-b"?: string;',
          '    "1st"?: string;',
          '    /**',
          '     * ends *\\/ here',
          '     * *\\/ again',
          '     */',
          '    "a.b"?: string;',
          '    "line\\u2028sep"?: "x\\u2029y";',
          '  }): Promise<unknown>;',
          '};',
        ].join('\n'),
      );
    });

    it('declares tools named like Object.prototype members, each once', () => {
      const tools = ['__proto__', 'constructor', 'toString', 'hasOwnProperty'].map((name) => jsonTool(name, { type: 'object' }));
      const text = describeTools(tools);
      expect(text).toContain('  "__proto__"(args: {}): Promise<unknown>;');
      expect(text).toContain('  "constructor"(args: {}): Promise<unknown>;');
      expect(text).toContain('  toString(args: {}): Promise<unknown>;');
      expect(typeErrors(text, 'await tools.__proto__({}); await tools.constructor({}); await tools.toString({});')).toEqual([]);
    });

    it('type-checks: the names and descriptions cannot break out of the declaration', () => {
      const program = [
        'const text: string = "";',
        'await tools["weird.name:1-x"]({ __proto__: text, constructor: 1, "a-b": "", "1st": "", "a.b": "", "line\\u2028sep": "x\\u2029y" });',
        '// @ts-expect-error pwned was only ever in a comment',
        'pwned;',
      ].join('\n');
      expect(typeErrors(describeTools([hostile]), program)).toEqual([]);
    });
  });

  describe('references', () => {
    type Tree = { name: string; children: Tree[] };
    const tree: z.ZodType<Tree> = z.lazy(() => z.object({ name: z.string(), children: z.array(tree) }));
    const saveTree = defineTool({ name: 'save_tree', description: 'Save a tree', input: z.object({ root: tree, note: z.string() }), execute: () => '' });
    const selfTree = defineTool({ name: 'self_tree', description: '', input: tree, execute: () => '' });

    it('declares a recursive z.lazy schema as a type alias before the namespace', () => {
      expect(describeTools([saveTree, selfTree])).toBe(
        [
          'type SaveTree_Schema0 = { name: string; children: SaveTree_Schema0[] };',
          'type SelfTree_Input = { name: string; children: SelfTree_Input[] };',
          '',
          'declare const tools: {',
          '  /**',
          '   * Save a tree',
          '   */',
          '  save_tree(args: { root: SaveTree_Schema0; note: string }): Promise<unknown>;',
          '  self_tree(args: SelfTree_Input): Promise<unknown>;',
          '};',
        ].join('\n'),
      );
    });

    it('inlines references in unions so TypeScript sees no circular alias, and stops at a cycle', () => {
      const tool = jsonTool('cycles', {
        type: 'object',
        properties: { self: { $ref: '#/$defs/Self' }, a: { $ref: '#/$defs/A' }, json: { $ref: '#/$defs/Json' } },
        $defs: {
          Self: { $ref: '#/$defs/Self' },
          A: { anyOf: [{ $ref: '#/$defs/B' }, { type: 'string' }] },
          B: { anyOf: [{ $ref: '#/$defs/A' }, { type: 'number' }] },
          Json: { anyOf: [{ type: ['string', 'number', 'boolean', 'null'] }, { type: 'array', items: { $ref: '#/$defs/Json' } }, { type: 'object', additionalProperties: { $ref: '#/$defs/Json' } }] },
        },
      });
      const text = describeTools([tool]);
      expect(text.split('\n\n')[0]).toBe(
        [
          'type Cycles_Self = unknown;',
          'type Cycles_A = number | string;',
          'type Cycles_Json = string | number | boolean | null | Cycles_Json[] | { [key: string]: Cycles_Json };',
        ].join('\n'),
      );
      expect(typeErrors(text, 'await tools.cycles({ self: 1, a: "x", json: { k: [1, "two", { three: null }] } });')).toEqual([]);
      expect(typeErrors(text, 'await tools.cycles({ json: { k: [undefined] } });')).not.toEqual([]);
    });

    it('terminates on a schema that refers to itself in every way at once', () => {
      const tool = jsonTool('loop', {
        $defs: { X: { allOf: [{ $ref: '#' }, { $ref: '#/$defs/X' }], properties: { x: { $ref: '#/$defs/X' } } } },
        anyOf: [{ $ref: '#' }, { $ref: '#/$defs/X' }],
      });
      const text = describeTools([tool]);
      expect(text).toContain('loop(args: Loop_Input)');
      expect(typeErrors(text, 'await tools.loop({ x: {} });')).toEqual([]);
    });

    it('stays bounded when references fan out exponentially', () => {
      const defs: Record<string, unknown> = { D0: { type: 'string' } };
      for (let i = 1; i <= 40; i++) defs[`D${i}`] = { anyOf: [{ $ref: `#/$defs/D${i - 1}` }, { allOf: [{ $ref: `#/$defs/D${i - 1}` }] }] };
      const text = describeTools([jsonTool('fan', { $defs: defs, properties: { v: { $ref: '#/$defs/D40' } } })]);
      expect(text.length).toBeLessThan(1_000_000);
      expect(text).toContain('fan(args: { v?: Fan_D40 })');
    });
  });

  describe('the declarations type-check with the program the model writes', () => {
    const shapes = jsonTool('shapes', {
      type: 'object',
      properties: {
        id: { type: 'integer' },
        tags: { type: 'array', items: { type: 'string' } },
        point: { type: 'array', prefixItems: [{ type: 'number' }, { type: 'number' }], items: false, minItems: 2 },
        kind: { enum: ['circle', 'square'] },
        size: { anyOf: [{ type: 'number' }, { type: 'null' }] },
        meta: { type: 'object', properties: { author: { type: 'string' } }, additionalProperties: { type: 'number' } },
        strict: { type: 'object', properties: { on: { type: 'boolean' } }, required: ['on'], additionalProperties: false },
      },
      required: ['id', 'kind'],
    });
    const declarations = describeTools([readFile, fetchPage, shapes]);

    it('accepts correct calls (strict mode)', () => {
      const program = [
        'const text: unknown = await tools.read_file({ path: "a.txt" });',
        'await tools.read_file({ path: "a.txt", encoding: "base64" });',
        'await tools["mcp:fetch-page"]({ url: "https://example.com" });',
        'await tools.shapes({ id: 1, kind: "circle", tags: ["a"], point: [1, 2], size: null, meta: { author: "me", x: 1 }, strict: { on: true } });',
        'void text;',
      ].join('\n');
      expect(typeErrors(declarations, program)).toEqual([]);
      expect(typeErrors(declarations, program, { exactOptionalPropertyTypes: true, noUncheckedIndexedAccess: true })).toEqual([]);
    });

    it.each([
      ['a missing required property', 'await tools.read_file({});'],
      ['a wrong type', 'await tools.read_file({ path: 42 });'],
      ['a value outside the enum', 'await tools.read_file({ path: "a", encoding: "latin1" });'],
      ['an unknown tool', 'await tools.write_file({ path: "a" });'],
      ['a tuple of the wrong length', 'await tools.shapes({ id: 1, kind: "square", point: [1] });'],
      ['a property additionalProperties: false forbids', 'await tools.shapes({ id: 1, kind: "square", strict: { on: true, off: false } });'],
      ['a wrong additional property', 'await tools.shapes({ id: 1, kind: "square", meta: { x: true } });'],
      ['a dashed name as a property access', 'await tools.mcp:fetch-page({ url: "x" });'],
    ])('rejects %s', (_mistake, call) => {
      expect(typeErrors(declarations, call).length).toBeGreaterThanOrEqual(1);
    });
  });
});
