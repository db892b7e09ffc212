import { isObject } from '../util/validate.js';

/**
 * An MCP result's content blocks as text for the model, one block per line group:
 * - `text` as it is;
 * - `resource` with text: a `[resource <uri>]` line, then the text; a binary one: `[resource <uri> <mimeType>]`;
 * - `image` / `audio`: `[image image/png]`, `[audio audio/wav]` (the data is not sent as text);
 * - `resource_link`: `[resource link <name>: <uri>]`;
 * - anything else: `[<type>]`.
 * Blocks are joined with a newline, so two text blocks never run into one word.
 *
 * @example
 * ```ts
 * renderContent([{ type: 'text', text: 'Chart:' }, { type: 'image', data: '…', mimeType: 'image/png' }]);
 * // 'Chart:\n[image image/png]'
 * ```
 */
export function renderContent(blocks: readonly unknown[]): string {
  return blocks.map(renderBlock).join('\n');
}

function renderBlock(block: unknown): string {
  if (!isObject(block)) return `[${describe(block)}]`;
  const { type } = block;
  const field = (name: string): string | undefined => {
    const value = block[name];
    return typeof value === 'string' ? value : undefined;
  };
  switch (type) {
    case 'text':
      return field('text') ?? '';
    case 'image':
    case 'audio':
      return `[${type} ${field('mimeType') ?? 'unknown type'}]`;
    case 'resource': {
      const { resource } = block;
      if (!isObject(resource)) return '[resource]';
      const { uri, text, mimeType } = resource;
      const name = typeof uri === 'string' ? uri : 'without uri';
      if (typeof text === 'string') return `[resource ${name}]\n${text}`;
      return `[resource ${name} ${typeof mimeType === 'string' ? mimeType : 'binary'}]`;
    }
    case 'resource_link':
      return `[resource link ${field('title') ?? field('name') ?? 'unnamed'}: ${field('uri') ?? 'without uri'}]`;
    default:
      return `[${typeof type === 'string' ? type : 'unknown content'}]`;
  }
}

function describe(value: unknown): string {
  return value === null ? 'null' : typeof value;
}
