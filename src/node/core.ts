/**
 * `toolstream` as Node resolves it (the `node` export condition): the core, which runs anywhere, and
 * `pathSandbox`, which it exported before 0.2 and which needs Node's file system. New code imports
 * `pathSandbox` from `toolstream/node`; a bundle for a browser or a Worker gets the core alone.
 *
 * @example
 * ```ts
 * import { createPipeline, pathSandbox } from 'toolstream'; // on Node, as in 0.1
 * ```
 *
 * @packageDocumentation
 */
export * from '../index.js';
export { pathSandbox } from './pathSandbox.js';
export type { PathSandboxOptions } from './pathSandbox.js';
