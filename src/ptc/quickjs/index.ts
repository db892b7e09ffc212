/**
 * `toolstream/quickjs`: the QuickJS runtime for programmatic tool calling. A subpath of its own, so
 * that an app that never runs a program never loads it; it carries its worker and QuickJS's
 * WebAssembly inside (no dependency to install, nothing to mark external when bundling). The seam it
 * implements — `CodeRuntime`, `runCodeTool`, `describeTools`, `ProgramError` — is in `toolstream`.
 */
export { createQuickJSRuntime } from './createQuickJSRuntime.js';
export type { QuickJSRuntimeOptions } from './createQuickJSRuntime.js';
