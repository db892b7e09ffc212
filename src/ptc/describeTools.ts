import { toolSchemas } from '../tool/toolSchemas.js';
import { ConfigError } from '../util/errors.js';
import type { AnyTool } from '../types/tool.js';
import { docComment, IDENTIFIER, INDENT, propertyKey, RESERVED_WORDS, SchemaRenderer } from './schemaTypes.js';

/**
 * Options of {@link describeTools}.
 *
 * @example
 * ```ts
 * describeTools(tools, { namespace: 'api' }); // declare const api: { … };
 * ```
 */
export interface DescribeToolsOptions {
  /** The name of the declared constant the program calls the tools through. @default 'tools' */
  readonly namespace?: string;
}

/**
 * Renders tools as the TypeScript declaration of a namespace object, for a model that writes a program
 * calling `await tools.name(args)` (the description of a `run_code` tool). Each tool is a method whose
 * parameter is its schema's input form, what the model may send (`toolSchemas`' JSON Schema, so a property
 * with a default is optional), with the tool's and properties' descriptions as doc comments. Definitions
 * (`$defs`, recursive `z.lazy` schemas) become type aliases declared before the namespace; whatever the
 * schema says that TypeScript cannot is `unknown`, which only widens what the declaration accepts.
 *
 * Names that are not plain identifiers are quoted, and `*\/` in a description is escaped, so no tool,
 * property or description can break out of its place in the text.
 *
 * @throws {ConfigError} when `namespace` is not an identifier, or two tools share a name.
 *
 * @example
 * ```ts
 * describeTools([readFile]);
 * // declare const tools: {
 * //   /**
 * //    * Read a UTF-8 text file
 * //    *\/
 * //   read_file(args: { path: string }): Promise<unknown>;
 * // };
 * ```
 */
export function describeTools(tools: readonly AnyTool[], options: DescribeToolsOptions = {}): string {
  const { namespace = 'tools' } = options;
  if (typeof namespace !== 'string' || !IDENTIFIER.test(namespace) || RESERVED_WORDS.has(namespace)) {
    throw new ConfigError('describeTools', 'namespace', 'an identifier', namespace);
  }
  const aliasNames = new Set([namespace]);
  const toolNames = new Set<string>();
  const aliases: string[] = [];
  const members: string[] = [];
  for (const { name, description, inputSchema } of toolSchemas(tools)) {
    if (toolNames.has(name)) throw new ConfigError('describeTools', 'tools', 'tools with unique names', name);
    toolNames.add(name);
    const renderer = new SchemaRenderer(inputSchema, name, aliasNames);
    const parameter = renderer.parameter();
    aliases.push(...renderer.aliasDeclarations());
    members.push(...docComment(description, 1, true), `${INDENT}${propertyKey(name)}(args: ${parameter}): Promise<unknown>;`);
  }
  const namespaceDeclaration = members.length === 0 ? `declare const ${namespace}: {};` : [`declare const ${namespace}: {`, ...members, '};'].join('\n');
  return aliases.length === 0 ? namespaceDeclaration : `${aliases.join('\n')}\n\n${namespaceDeclaration}`;
}
