import { implementTool, type AnyTool } from '../../../src/index.js';
import { sleep } from '../support/contracts.js';

/** An in-process `sleep` body that honours its signal, and what a test reads of it. */
export interface AbortableSleep {
  readonly tool: AnyTool;
  /** Whether the body started. */
  started(): boolean;
  /** Resolves once the body saw its signal abort. */
  readonly abortSeen: Promise<void>;
}

/** The `sleep` contract's body for a worker in the test's process: sleeps `ms`, or until its signal aborts. */
export function abortableSleep(): AbortableSleep {
  let aborted!: () => void;
  const abortSeen = new Promise<void>((resolve) => (aborted = resolve));
  let started = false;
  const tool = implementTool(sleep, async ({ ms }, { signal }) => {
    started = true;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      signal.addEventListener('abort', () => (clearTimeout(timer), aborted(), resolve()), { once: true });
    });
    return 'slept';
  });
  return { tool, started: () => started, abortSeen };
}
