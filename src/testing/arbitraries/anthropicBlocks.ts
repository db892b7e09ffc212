import fc from 'fast-check';
import { prose, token } from './modelStream.js';

/** A content block before it gets its index: its `content_block_start` block and its deltas. */
export interface BlockSpec {
  readonly start: Readonly<Record<string, unknown>>;
  readonly deltas: readonly Readonly<Record<string, unknown>>[];
}

/** A client `tool_use` block, as the API streams it (`caller` as the API adds it since programmatic calling). */
export function toolUseBlock(id: string, name: string, pieces: readonly string[], caller: boolean): BlockSpec {
  return {
    start: { type: 'tool_use', id, name, input: {}, ...(caller ? { caller: { type: 'direct' } } : {}) },
    deltas: pieces.map((piece) => ({ type: 'input_json_delta', partial_json: piece })),
  };
}

/** A text block, as the model writes before its calls ("I'll check the weather…"). */
export const textBlock: fc.Arbitrary<BlockSpec> = prose.map((pieces) => ({
  start: { type: 'text', text: '' },
  deltas: pieces.map((text) => ({ type: 'text_delta', text })),
}));

/** Extended thinking: thinking deltas, then the signature (`fantasy-claude-sonnet4-thinking`). */
const thinkingBlock: fc.Arbitrary<BlockSpec> = fc.tuple(prose, token(64)).map(([pieces, signature]) => ({
  start: { type: 'thinking', thinking: '', signature: '' },
  deltas: [...pieces.map((thinking) => ({ type: 'thinking_delta', thinking })), { type: 'signature_delta', signature }],
}));

/** A text block citing a web search result (`pai-anthropic-web-search`). */
const citedTextBlock: fc.Arbitrary<BlockSpec> = fc.tuple(prose, token(40)).map(([pieces, index]) => ({
  start: { type: 'text', text: '', citations: [] },
  deltas: [
    {
      type: 'citations_delta',
      citation: { type: 'web_search_result_location', cited_text: 'News headlines…', url: 'https://example.com/news', title: 'News', encrypted_index: index },
    },
    ...pieces.map((text) => ({ type: 'text_delta', text })),
  ],
}));

/**
 * A server tool's call and its result: run on Anthropic's side, never a client call (web search, code
 * execution, tool search: `pai-anthropic-web-search`, `vercel-anthropic-programmatic`,
 * `vercel-anthropic-tool-search-*`).
 */
const serverToolBlocks: fc.Arbitrary<BlockSpec[]> = fc
  .tuple(token(24), fc.constantFrom('web_search', 'code_execution', 'tool_search_tool_bm25'), fc.constantFrom('{"query":"news"}', '{"code":"print(1)"}', ''))
  .map(([suffix, name, input]) => {
    const id = `srvtoolu_01${suffix}`;
    const result =
      name === 'web_search'
        ? { type: 'web_search_tool_result', tool_use_id: id, content: [{ type: 'web_search_result', title: 'News', url: 'https://example.com/news', encrypted_content: suffix, page_age: null }] }
        : name === 'code_execution'
          ? { type: 'code_execution_tool_result', tool_use_id: id, content: { type: 'code_execution_result', stdout: '1\n', stderr: '', return_code: 0, content: [] } }
          : { type: 'tool_search_tool_result', tool_use_id: id, content: { type: 'tool_search_tool_search_result', tool_references: [{ type: 'tool_reference', tool_name: 'get_weather' }] } };
    return [
      { start: { type: 'server_tool_use', id, name, input: {} }, deltas: [{ type: 'input_json_delta', partial_json: '' }, { type: 'input_json_delta', partial_json: input }] },
      { start: result, deltas: [] },
    ];
  });

/** An MCP connector call and its result, run by Anthropic (`pai-anthropic-mcp`). */
const mcpBlocks: fc.Arbitrary<BlockSpec[]> = token(24).map((suffix) => {
  const id = `mcptoolu_01${suffix}`;
  return [
    { start: { type: 'mcp_tool_use', id, name: 'ask_question', input: {}, server_name: 'deepwiki' }, deltas: [{ type: 'input_json_delta', partial_json: '{"question":"what is it?"}' }] },
    { start: { type: 'mcp_tool_result', tool_use_id: id, is_error: false, content: [{ type: 'text', text: 'It is a framework.' }] }, deltas: [] },
  ];
});

/** Blocks that carry no client call, as the recordings have them between and around the calls. */
export const noiseBlocks: fc.Arbitrary<BlockSpec[]> = fc.oneof(
  textBlock.map((block) => [block]),
  thinkingBlock.map((block) => [block]),
  citedTextBlock.map((block) => [block]),
  serverToolBlocks,
  mcpBlocks,
);
