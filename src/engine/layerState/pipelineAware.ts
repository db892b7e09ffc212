import { pipelineHandle, type PipelineHandle } from '../pipelineHandle.js';
import type { PipelineSettings } from '../settings.js';
import type { AnyTool } from '../../types/tool.js';

/**
 * The key of a tool's hook for the pipeline it is registered in. Registered (`Symbol.for`), so a
 * `runCodeTool` from one build of toolstream (CJS) is bound by a pipeline from another (ESM). Named for
 * what the hook is given (a `PipelineHandle`), so a tool of a build that expected something else is
 * not bound to it.
 */
export const PIPELINE_HOOK: unique symbol = Symbol.for('toolstream.pipelineHandle') as typeof PIPELINE_HOOK;

/**
 * A tool that needs the pipeline it runs in: `run_code` dispatches its program's sub-calls through the
 * same stages, policies and approver as the model's own calls. The pipeline hands it a handle
 * (`PipelineHandle`) when it is built and registers the tool this returns instead.
 */
export interface PipelineAwareTool extends AnyTool {
  readonly [PIPELINE_HOOK]: (pipeline: PipelineHandle) => AnyTool;
}

export function isPipelineAware(tool: AnyTool): tool is PipelineAwareTool {
  return typeof (tool as Partial<PipelineAwareTool>)[PIPELINE_HOOK] === 'function';
}

/**
 * Settings whose pipeline-aware tools are bound to them, through one handle. The handle reads the
 * returned settings, bound tools included, so a bound tool can tell itself from the tools it dispatches to.
 */
export function bindToPipeline(settings: PipelineSettings): PipelineSettings {
  if (![...settings.tools.values()].some(isPipelineAware)) return settings;
  const tools = new Map(settings.tools);
  const bound: PipelineSettings = { ...settings, tools };
  const handle = pipelineHandle(bound);
  for (const [name, tool] of settings.tools) {
    if (isPipelineAware(tool)) tools.set(name, tool[PIPELINE_HOOK](handle));
  }
  return bound;
}
