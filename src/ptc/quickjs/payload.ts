/**
 * What the QuickJS runtime needs besides its own code: the worker thread's script and QuickJS's
 * WebAssembly. This module serves them when running from source (the tests, tsx): the worker's
 * TypeScript, compiled on load by tsx's CommonJS hook (a development dependency), and the wasm file of
 * the QuickJS variant in node_modules.
 *
 * The published build replaces it with `dist/quickjs-payload.cjs` (scripts/quickjsPayload.ts), which
 * holds both as text — the worker bundled with everything it imports, the wasm brotli-compressed in
 * base64 (265 KB rather than 671 KB, decompressed once per process in about 3 ms) — so that the
 * runtime finds nothing by path at run time, and an app bundled with toolstream in it runs from its
 * bundle alone. Both builds (ESM and CommonJS) share that one file.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** The shape both this module and the built payload have. */
export interface QuickJSPayload {
  /** The worker's script, evaluated as CommonJS in a fresh worker thread (`new Worker(code, { eval: true })`). */
  readonly workerCode: string;
  /** QuickJS's WebAssembly binary, brotli-compressed when `brotli` says so (read or decoded on each call: the runtime compiles it once). */
  wasm(): { readonly bytes: Uint8Array<ArrayBuffer>; readonly brotli: boolean };
}

const require = createRequire(import.meta.url);
const register = require.resolve('tsx/cjs/api');
const worker = fileURLToPath(new URL('./worker.ts', import.meta.url));

const payload: QuickJSPayload = {
  workerCode: `require(${JSON.stringify(register)}).register(); require(${JSON.stringify(worker)});`,
  wasm: () => ({ bytes: readFileSync(require.resolve('@jitl/quickjs-wasmfile-release-sync/wasm')), brotli: false }),
};

export default payload;
