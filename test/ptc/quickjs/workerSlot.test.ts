import { describe, expect, it } from 'vitest';
import type { WorkerSetup } from '../../../src/ptc/quickjs/protocol.js';
import { WorkerSlot } from '../../../src/ptc/quickjs/workerSlot.js';
import type { CodeRunResult } from '../../../src/ptc/types.js';
import { failureOf } from './helpers.js';

/** The smallest valid WebAssembly module: the slot only hands it to the worker. */
const wasm = new WebAssembly.Module(new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]));
const setup: Omit<WorkerSetup, 'stop'> = { wasm, memoryLimitBytes: 64 * 2 ** 20, maxLogChars: 100, maxValueChars: 100, maxArgsChars: 100, maxPendingArgsChars: 100 };

function runOn(code: string): Promise<CodeRunResult> {
  return new Promise((resolve) => {
    const slot = new WorkerSlot(code, setup, undefined, () => undefined);
    slot.start({ request: { program: 'return 1', bindings: [] }, timeoutMs: 5_000, resolve });
  });
}

describe('a worker that dies', () => {
  it('that fails to load is reported as it failed, never as a memory problem', async () => {
    // What a bundled app used to see when the worker's script was not beside the bundle.
    const missing = "throw Object.assign(new Error(\"Cannot find module '/srv/app/quickjs-worker.js'\"), { code: 'MODULE_NOT_FOUND' })";
    const message = failureOf(await runOn(missing), 'worker-exit');
    expect(message).toBe("The program's worker thread stopped (it failed: Error: Cannot find module '/srv/app/quickjs-worker.js'). A fresh worker runs the next program.");
    expect(message).not.toMatch(/memory/);
  });

  it('that exits is reported with its exit code', async () => {
    const message = failureOf(await runOn('process.exit(3)'), 'worker-exit');
    expect(message).toBe("The program's worker thread stopped (it exited with code 3). A fresh worker runs the next program.");
  });
});
