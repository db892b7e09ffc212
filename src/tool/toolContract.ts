import type { $ZodType, output as SchemaOutput } from 'zod/v4/core';
import { defineTool, toolFacts, type FactsDefinition } from './defineTool.js';
import { ConfigError } from '../util/errors.js';
import type { ExecuteOutcome } from '../types/outcome.js';
import type { RetryOptions } from '../types/retry.js';
import type { Render, Tool, ToolContext, ToolDefinition, ToolFacts, ToolOutput } from '../types/tool.js';

const CONTRACT = Symbol.for('toolstream.toolContract');

/**
 * A tool without its body: its name, description, argument schema and scheduling facts. The agent and
 * the workers of a fleet import the same contract — the agent makes remote tools of it
 * (`remoteTools` in `toolstream/bullmq`), a worker gives it a body with {@link implementTool} — so both
 * sides validate with one schema and agree on the mode, the timeout, whether it is idempotent and how
 * it is retried (`retry`: the agent retries a remote tool by dispatching its job again; a worker never
 * repeats a body on its own).
 *
 * @typeParam Input - the zod schema of the arguments.
 * @typeParam Output - what a body returns: `render` sees it, and {@link implementTool} refuses a body
 *   that returns anything else. Inferred from `render`'s parameter (or from the declared type of the
 *   contract); `unknown` when neither says.
 *
 * @example
 * ```ts
 * export const renderPage = toolContract({
 *   name: 'render_page',
 *   description: 'Render a URL in a headless browser and return its text',
 *   input: z.object({ url: z.url() }),
 *   mode: 'parallel',
 *   timeoutMs: 60_000,
 *   idempotent: true,
 *   render: (page: { title: string; text: string }) => `# ${page.title}\n\n${page.text}`,
 * });
 * ```
 */
export interface ToolContract<Input extends $ZodType = $ZodType, Output = unknown> extends ToolFacts<Input> {
  /** The model-facing text of the value a worker returned (it runs in the agent). */
  readonly render: Render<Output> | undefined;
  readonly [CONTRACT]: true;
}

/**
 * What {@link toolContract} takes: a tool's definition without `execute`. The optional facts also take
 * `undefined`, so another contract spread into it (`toolContract({ ...contract, timeoutMs })`) holds
 * under `exactOptionalPropertyTypes`.
 */
export type ToolContractDefinition<Input extends $ZodType = $ZodType, Output = unknown> = FactsDefinition<Input> &
  Omit<ToolDefinition<Input>, 'execute' | 'render' | keyof FactsDefinition<Input>> & {
    /** The model-facing text of the value the body returned, made where the result is (the agent). */
    readonly render?: Render<Output> | undefined;
  };

/**
 * Declare a tool's contract: checked eagerly like {@link defineTool} (the same rules and defaults:
 * `mode` `'exclusive'`, `idempotent` `false`), returned frozen.
 *
 * @throws {ConfigError} when a field is missing or malformed; the message names it.
 *
 * @example
 * ```ts
 * import { z } from 'zod';
 * import { toolContract } from 'toolstream';
 *
 * export const chargeCard = toolContract({
 *   name: 'charge_card',
 *   description: 'Charge a saved card',
 *   input: z.object({ customer: z.string(), cents: z.int().positive() }),
 *   timeoutMs: 30_000, // exclusive, not idempotent: never charged twice
 * });
 * ```
 */
export function toolContract<Input extends $ZodType, Output = unknown>(definition: ToolContractDefinition<Input, Output>): ToolContract<Input, Output> {
  const facts = toolFacts('toolContract', definition);
  const render = definition.render;
  if (render !== undefined && typeof render !== 'function') throw new ConfigError('toolContract', 'render', 'a function (value) => string', render);
  return Object.freeze({ ...facts, render, [CONTRACT]: true as const });
}

/** Whether `value` was made by {@link toolContract} (in any build of toolstream loaded in the process). */
export function isToolContract(value: unknown): value is ToolContract {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[CONTRACT] === true;
}

/**
 * Give a contract its body: the tool a worker runs (or a local pipeline, for tests and for a tool that
 * runs in-process in one deployment and on the fleet in another). Its facts are the contract's, and
 * its body must return the contract's output (or a typed outcome): the tool's output type is the body's.
 *
 * @throws {ConfigError} when `contract` is not a contract or `execute` not a function.
 *
 * @example
 * ```ts
 * import { implementTool } from 'toolstream';
 * import { renderPage } from './contracts.js';
 *
 * export const renderPageTool = implementTool(renderPage, async ({ url }, { signal }) => {
 *   const page = await browser.newPage();
 *   try {
 *     await page.goto(url, { signal });
 *     return await page.innerText('body');
 *   } finally {
 *     await page.close();
 *   }
 * });
 * ```
 */
export function implementTool<Input extends $ZodType, Promised, Output extends Promised | ExecuteOutcome>(
  contract: ToolContract<Input, Promised>,
  execute: (args: SchemaOutput<Input>, ctx: ToolContext) => ToolOutput<Output>,
): Tool<Input, Output> {
  if (!isToolContract(contract)) throw new ConfigError('implementTool', 'contract', 'a contract made by toolContract()', contract);
  if (typeof execute !== 'function') throw new ConfigError('implementTool', 'execute', 'a function', execute);
  const { name, description, input, mode, timeoutMs, onError, idempotent, retry, render } = contract;
  return defineTool<Input, Output>({
    name,
    description,
    input,
    mode,
    idempotent,
    execute,
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    ...(onError === undefined ? {} : { onError }),
    ...(retry === undefined ? {} : { retry: retry as RetryOptions }), // resolved already: defineTool takes it as it is
    // The contract's render takes a `Promised`, and the body's `Output` is one (or an outcome, which render never sees).
    ...(render === undefined ? {} : { render: render as Render<Output> }),
  });
}
