import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult, Tool as McpToolDescriptor } from '@modelcontextprotocol/sdk/types.js';
import type { OnError, ToolMode } from '../defineTool.js';
import { brand } from '../internal/brand.js';

/** A tool as an MCP server lists it (`tools/list`). */
export type McpTool = McpToolDescriptor;

/**
 * What {@link mcpTools} needs of a connected MCP client: the SDK's `Client` (or anything with its
 * `listTools` and `callTool`).
 */
export type McpClient = Pick<Client, 'listTools' | 'callTool'>;

/** Why {@link mcpTools} left a server's tool out. */
export type McpSkipReason =
  /**
   * The name has a character outside letters, digits, `_ - . :` (a space, a slash, a look-alike such
   * as Cyrillic `е`) and `names` does not map it to a name of its own.
   */
  | 'unsafe_name'
  /** The name is empty, or longer than 128 characters with the prefix. */
  | 'invalid_name'
  /** An earlier tool of the listing already has this (prefixed, possibly mapped) name. */
  | 'duplicate_name'
  /** The tool only runs as an MCP task (`execution.taskSupport: 'required'`), which `callTool` refuses. */
  | 'task_required'
  /** Its `inputSchema` cannot be compiled into a validator, so its calls could not be checked. */
  | 'invalid_schema';

/**
 * Something {@link mcpTools} did to a server's tool that the caller may want to know (see
 * `onNotice`):
 * - `skipped`: the tool is not in the returned list (`reason` says why);
 * - `relaxed`: parts of its input schema are not checked before the call (`keywords` are JSON Pointers
 *   into `inputSchema`); the tool is offered, and the server still validates its own input.
 */
export type McpToolNotice =
  | { readonly kind: 'skipped'; readonly reason: McpSkipReason; readonly tool: McpTool; readonly message: string }
  | {
      readonly kind: 'relaxed';
      readonly name: string;
      readonly keywords: readonly string[];
      readonly tool: McpTool;
      readonly message: string;
    };

/**
 * Options of {@link mcpTools}.
 *
 * @example
 * ```ts
 * const tools = await mcpTools(client, {
 *   prefix: 'mcp__github__',
 *   trustAnnotations: true, // our own server: readOnlyHint → parallel
 *   mode: { merge_pull_request: 'exclusive' },
 *   timeoutMs: 30_000,
 *   onNotice: (notice) => console.warn(notice.message),
 * });
 * ```
 */
export interface McpToolsOptions {
  /**
   * Put before every tool name, e.g. `'mcp__github__'` → `mcp__github__create_issue`. Letters, digits,
   * `_ - . :` only. The server is always called with its own name.
   * @default ''
   */
  readonly prefix?: string;
  /**
   * Names of your choosing for server tools, keyed by the server's name: the pipeline name is
   * `prefix` + the mapped name, and the server is still called by its own. A server name with
   * characters a tool name may not have (anything but letters, digits, `_ - . :`) is only offered
   * when mapped here: decide deliberately what a look-alike such as `dеlete_repo` (Cyrillic `е`) is
   * called, so your deny patterns see it. Checked at once: each mapped name must be valid, fit
   * beside the prefix (128 characters together) and be mapped from one server name only.
   * @example { 'dеlete_repo': 'delete_repo_cyrillic', 'get file': 'get_file' }
   */
  readonly names?: Readonly<Record<string, string>>;
  /**
   * Whether the server's annotations decide the mode: `readOnlyHint: true` → `'parallel'`, anything
   * else → `'exclusive'`. Annotations are hints a server makes about itself: trust them only from a
   * server you trust. Untrusted, every tool is `'exclusive'` (always correct, only slower) unless
   * `mode` says otherwise.
   * @default false
   */
  readonly trustAnnotations?: boolean;
  /**
   * The mode of the tools, deciding before the annotations: one mode for all, a map from the server's
   * tool names (without prefix), or a function of the listed tool (return `undefined` to fall back to
   * the annotations rule).
   */
  readonly mode?: ToolMode | Readonly<Record<string, ToolMode>> | ((tool: McpTool) => ToolMode | undefined);
  /** Every tool's `timeoutMs`: the call is aborted (and the MCP request cancelled) after it. */
  readonly timeoutMs?: number;
  /**
   * The MCP SDK's own request timeout for each call, which fails the call with `tool_error`
   * ("Request timed out"). The SDK's default is 60 s, whatever the pipeline allows: raise it for
   * long-running tools.
   * @default `timeoutMs` when set, else the SDK's default (60 s)
   */
  readonly requestTimeoutMs?: number;
  /** Every tool's `onError` (what a failure does to its siblings). @default the pipeline's */
  readonly onError?: OnError;
  /**
   * The result's `value`. The model always reads the text of the server's content blocks (what the
   * server wrote for it; MCP servers send their structured output as a text block too), whichever
   * is chosen here:
   * - `'structured'` — the `structuredContent` when the server sent one, for the host to use (a server
   *   that sent no content block besides it: the model reads its JSON); else the blocks' text.
   * - `'text'` — always the text of the content blocks.
   *
   * For the model to read the structured JSON instead, replace `content` in a post-execute policy
   * (`{ kind: 'accept', content: JSON.stringify(ctx.value) }`).
   * @default 'structured'
   */
  readonly output?: 'structured' | 'text';
  /**
   * The most characters a call's arguments may have in their strings and keys, in all. Raise it for
   * tools that take whole files. It is a budget of pattern search steps: a tool whose schema checks a
   * string with patterns costing more than one step per character (an unanchored one, several on one
   * string) accepts that many times fewer.
   * @default 1048576
   */
  readonly maxArgsLength?: number;
  /**
   * The most values (objects, arrays, strings, numbers, booleans, nulls) a call's arguments may hold.
   * It is a budget of schema evaluations (zod takes up to about 2.5 µs for one that fails, so the
   * default is about 5 ms): a tool whose schema evaluates a value several times (`anyOf`, `allOf`,
   * `contains`, large mixed `enum`s, objects with many properties) accepts that many times fewer.
   * @default 2048
   */
  readonly maxArgsValues?: number;
  /**
   * The deepest nesting a call's arguments may have (the arguments object is depth 0), 1 to 1000.
   * Deeper ones get `invalid_args`: zod's validators recurse, and a recursive schema would otherwise
   * overflow the stack. Arguments beyond any of the three limits get `invalid_args` before anything
   * else is checked, and the server never sees them.
   * @default 64
   */
  readonly maxArgsDepth?: number;
  /** Aborts the listing (`tools/list` requests). */
  readonly signal?: AbortSignal;
  /** Told about every tool skipped or relaxed. Without it these happen silently. */
  readonly onNotice?: (notice: McpToolNotice) => void;
}

/**
 * A call's result with `isError: true`: the server ran the tool and reports that it failed. The body
 * throws it, so the pipeline gives an error result (`tool_error`, `cause` is this error); the message is
 * the text of the result's content.
 *
 * @example
 * ```ts
 * if (result.status === 'error' && result.error.code === 'tool_error' && result.error.cause instanceof McpToolError) {
 *   console.log(result.error.cause.result.content);
 * }
 * ```
 */
export class McpToolError extends Error {
  static {
    brand(this, 'McpToolError');
  }

  readonly code = 'mcp_tool_error' as const;

  constructor(
    /** The server's name of the tool. */
    readonly tool: string,
    message: string,
    /** The result as the server sent it. */
    readonly result: CallToolResult,
  ) {
    super(message);
    this.name = 'McpToolError';
  }
}
