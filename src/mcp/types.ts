import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult, Tool as McpToolDescriptor } from '@modelcontextprotocol/sdk/types.js';
import { brand } from '../util/brand.js';
import { formatIssues } from '../util/formatIssues.js';
import type { OnError, ToolMode } from '../types/tool.js';
import type { ArgsIssue } from '../types/toolError.js';

/** A tool as an MCP server lists it (`tools/list`). */
export type McpTool = McpToolDescriptor;

/**
 * What {@link mcpTools} needs of a connected MCP client: the SDK's `Client` (or anything with its
 * `request`). `mcpTools` sends `tools/list` and `tools/call` through `request` rather than the
 * client's `listTools` and `callTool`: those compile every output schema with ajv and check each
 * structured result with it on the event loop, where one backtracking pattern can freeze the process
 * for seconds. `mcpTools` checks structured output itself (see `output`).
 */
export type McpClient = Pick<Client, 'request'>;

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
  | 'invalid_schema'
  /**
   * Its `outputSchema` is malformed (not an object schema, an unknown `type`, a `pattern` that is not a
   * regular expression, a `$ref` to a definition it lacks, …) or cannot be compiled, so the structured
   * content of its results could not be checked. Only with `output: 'structured'`.
   */
  | 'invalid_output_schema';

/**
 * Something {@link mcpTools} did to a server's tool that the caller may want to know (see
 * `onNotice`):
 * - `skipped`: the tool is not in the returned list (`reason` says why);
 * - `relaxed`: parts of one of its schemas are not checked (`keywords` are JSON Pointers into the
 *   `schema` named): of `inputSchema`, before the call (the server still validates its own input); of
 *   `outputSchema`, on the structured content of its results. The tool is offered.
 */
export type McpToolNotice =
  | { readonly kind: 'skipped'; readonly reason: McpSkipReason; readonly tool: McpTool; readonly message: string }
  | {
      readonly kind: 'relaxed';
      readonly name: string;
      readonly schema: 'inputSchema' | 'outputSchema';
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
   *   that sent no content block besides it: the model reads its JSON); else the blocks' text. For a
   *   tool with an `outputSchema`, the structured content is checked against it first, with the
   *   vetting input schemas get (bounded by `maxOutputLength`, `maxOutputValues`, `maxOutputDepth`; a
   *   pattern not provably linear, or a composition whose work would multiply, is not checked and
   *   reported as `relaxed`): content that is missing, fails it, or is beyond a limit gives
   *   `tool_error` with an {@link McpOutputError}. A tool whose output schema is malformed is skipped
   *   (`invalid_output_schema`).
   * - `'text'` — always the text of the content blocks; the structured content is not used, so output
   *   schemas are neither compiled nor checked.
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
  /**
   * The most characters a result's structured content may have in its strings and keys, in all, to be
   * checked against the tool's `outputSchema` (with `output: 'structured'`); beyond it the call gives
   * `tool_error` ({@link McpOutputError}, `too_large`). A budget of pattern search steps, like
   * `maxArgsLength`: a schema with patterns costing more than one step per character accepts fewer.
   * @default 16777216
   */
  readonly maxOutputLength?: number;
  /**
   * The most values a result's structured content may hold to be checked against the tool's
   * `outputSchema`; beyond it the call gives `tool_error` ({@link McpOutputError}, `too_large`). A budget
   * of schema evaluations, like `maxArgsValues` (the default is a few tens of milliseconds at most):
   * raise it for tools that return large structured results, or use `output: 'text'`.
   * @default 16384
   */
  readonly maxOutputValues?: number;
  /**
   * The deepest nesting a result's structured content may have to be checked (1 to 1000); deeper
   * content gives `tool_error` ({@link McpOutputError}, `too_large`).
   * @default 64
   */
  readonly maxOutputDepth?: number;
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

/**
 * What is wrong with the structured content of a result, checked against the tool's `outputSchema`:
 * - `missing` — the tool declares an output schema, and the result (not an error) has no structured content;
 * - `mismatch` — the content fails the schema (`issues` has the paths into it);
 * - `too_large` — the content is beyond `limit` (the option named, divided by the schema's cost: `max`),
 *   so it was not checked.
 */
export type McpOutputProblem =
  | { readonly reason: 'missing' }
  | { readonly reason: 'mismatch'; readonly issues: readonly ArgsIssue[] }
  | { readonly reason: 'too_large'; readonly limit: 'maxOutputLength' | 'maxOutputValues' | 'maxOutputDepth'; readonly max: number };

/**
 * A result whose structured content does not hold to the tool's `outputSchema` (with `output:
 * 'structured'`): the body throws it, so the pipeline gives `tool_error` (`cause` is this error) and the
 * host never reads a value that breaks the contract. The message is derived from `problem`.
 *
 * @example
 * ```ts
 * const cause = result.status === 'error' && result.error.code === 'tool_error' ? result.error.cause : undefined;
 * if (cause instanceof McpOutputError && cause.problem.reason === 'mismatch') {
 *   console.warn(cause.tool, cause.problem.issues);
 * }
 * ```
 */
export class McpOutputError extends Error {
  static {
    brand(this, 'McpOutputError');
  }

  readonly code = 'mcp_invalid_output' as const;

  constructor(
    /** The server's name of the tool. */
    readonly tool: string,
    readonly problem: McpOutputProblem,
    /** The result as the server sent it. */
    readonly result: CallToolResult,
  ) {
    super(describeOutputProblem(tool, problem));
    this.name = 'McpOutputError';
  }
}

function describeOutputProblem(tool: string, problem: McpOutputProblem): string {
  const name = `MCP tool ${JSON.stringify(tool)}`;
  switch (problem.reason) {
    case 'missing':
      return `${name} declares an output schema but returned no structured content`;
    case 'mismatch':
      return `${name} returned structured content that does not match its output schema:\n${formatIssues(problem.issues)}`;
    case 'too_large':
      return `${name} returned structured content too large to check against its output schema (${problem.limit}: ${problem.max} for this schema)`;
  }
}
