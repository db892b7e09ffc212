/**
 * The worker thread of the QuickJS runtime: runs one program at a time, each on a fresh QuickJS module
 * with its own fixed-size WebAssembly memory (the memory limit), prepared while the worker is idle.
 * Written without `import.meta`: the build bundles it into one CommonJS script that the runtime evaluates
 * in each worker (scripts/quickjsPayload.ts); the tests load it from source through tsx.
 */
import { parentPort, workerData } from 'node:worker_threads';
import releaseSync from '@jitl/quickjs-wasmfile-release-sync';
import { newQuickJSWASMModuleFromVariant, newVariant, type QuickJSSyncVariant, type QuickJSWASMModule } from 'quickjs-emscripten-core';
import { StopReason, type FromWorker, type ToWorker, type WorkerSetup } from './protocol.js';
import { SandboxRun } from './sandbox.js';

const WASM_PAGE = 64 * 1024;
/** What the QuickJS module asks for at instantiation (256 pages). */
const INITIAL_PAGES = 256;
/** A module whose memory grew past this is replaced rather than kept by an idle worker. */
const REUSE_MAX_BYTES = 2 * INITIAL_PAGES * WASM_PAGE;

// The package is CommonJS with an ESM twin: its default export arrives wrapped or not, by loader.
const variant = ((releaseSync as { default?: QuickJSSyncVariant }).default ?? releaseSync) as QuickJSSyncVariant;

const setup = workerData as WorkerSetup;
const port = parentPort!;
const stopSlot = new Int32Array(setup.stop);
const maximumPages = Math.max(INITIAL_PAGES, Math.floor(setup.memoryLimitBytes / WASM_PAGE));

// The first module also runs a tiny program at boot, so that compiling sucrase's and QuickJS's code
// (the JIT) is not billed to the first real program's time limit.
let spare: Promise<QuickJSWASMModule> = prepare().then((module) => (warmUp(module) ? module : prepare()));
let current: { readonly runId: number; readonly run: SandboxRun } | undefined;

function prepare(): Promise<QuickJSWASMModule> {
  const memory = new WebAssembly.Memory({ initial: INITIAL_PAGES, maximum: maximumPages });
  // Emscripten's stderr (an `Aborted(…)` line when a run that exhausted its memory is freed) would only be
  // noise in the host's logs: the run's own failure already says what happened.
  const emscriptenModule = { printErr: () => undefined } as NonNullable<Parameters<typeof newVariant>[1]['emscriptenModule']>;
  const module = newQuickJSWASMModuleFromVariant(newVariant(variant, { wasmModule: setup.wasm, wasmMemory: memory, emscriptenModule }));
  module.catch(() => undefined); // reported by the run that awaits it
  return module;
}

/** Runs a trivial TypeScript program on `module`; true when the module is fit to serve afterwards. */
function warmUp(module: QuickJSWASMModule): boolean {
  try {
    const idle = { call: () => undefined, stopReason: () => StopReason.none, done: () => undefined };
    const run = new SandboxRun(module, setup, idle, 60_000);
    run.start('const x: number = 1; return { x }', [{ global: 'tools', functions: ['f'] }]);
    return run.release();
  } catch {
    return false;
  }
}

const post = (message: FromWorker): void => port.postMessage(message);

async function start(message: Extract<ToWorker, { type: 'run' }>): Promise<void> {
  const { runId } = message;
  let module: QuickJSWASMModule;
  try {
    module = await spare;
  } catch (error) {
    spare = prepare();
    post({ type: 'done', runId, result: { logs: [], failure: { kind: 'exception', message: `The runtime could not start an interpreter: ${String(error)}` } } });
    return;
  }
  post({ type: 'started', runId });
  const run = new SandboxRun(module, setup, {
    call: (callId, global, name, json) => post({ type: 'call', runId, callId, global, name, json }),
    stopReason: () => Atomics.load(stopSlot, 0) as StopReason,
    done: (result) => {
      if (current?.runId === runId) current = undefined;
      post({ type: 'done', runId, result });
      // The module serves the next run too, unless freeing the run failed or its memory grew large.
      const reusable = run.release() && module.getWasmMemory().buffer.byteLength <= REUSE_MAX_BYTES;
      spare = reusable ? Promise.resolve(module) : prepare();
    },
  }, message.timeoutMs);
  current = { runId, run };
  run.start(message.program, message.bindings);
}

port.on('message', (message: ToWorker) => {
  if (message.type === 'run') {
    void start(message);
    return;
  }
  if (current?.runId !== message.runId) return; // an answer for a run that already ended
  if (message.type === 'settle') current.run.settle(message.callId, message.json);
  else if (message.type === 'fail') current.run.reject(message.callId, message.error);
  else current.run.stop();
});
