/**
 * `toolstream/node` — what needs Node's file system (Node 20+, also Bun and Deno): `pathSandbox`, the
 * policy that keeps path arguments inside a root, symbolic links followed. The core (`toolstream`)
 * runs anywhere; on Node it still re-exports `pathSandbox` for programs written before 0.2.
 *
 * @example
 * ```ts
 * import { createPipeline } from 'toolstream';
 * import { pathSandbox } from 'toolstream/node';
 *
 * const pipeline = createPipeline({ tools, pre: [pathSandbox({ root: process.cwd() })] });
 * ```
 *
 * @packageDocumentation
 */
export { pathSandbox } from './pathSandbox.js';
export type { PathSandboxOptions } from './pathSandbox.js';
