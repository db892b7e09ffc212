/**
 * The turn of the stalled-owner tests: four exclusive, non-idempotent calls whose bodies leave a line in
 * a file per call (`<pid> start`, `<pid> end`) — so a test counts body starts from the bodies' own side,
 * whatever any journal says — and tell the process driving them when each starts (`onStart`).
 */
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { createPipeline, defineTool, type JournalStore, type ToolCall } from '../../../src/index.js';

export const SECRET = 'the secret of the stalled-owner tests, 32+ bytes';
/** Short, so a stall of a few hundred milliseconds outlives it. */
export const STALL_LEASE_MS = 300;
/** How long each body takes. */
export const BODY_MS = 120;

export const stallTurn: readonly ToolCall[] = ['c0', 'c1', 'c2', 'c3'].map((id) => ({ id, name: 'op', args: {} }));

export function stallPipeline(journal: JournalStore, dir: string, onStart: (callId: string) => void = () => undefined) {
  const op = defineTool({
    name: 'op',
    description: 'an effect that must happen once',
    input: z.object({}),
    onError: 'continue', // a call answered outcome_unknown cancels nothing: the new owner runs the rest
    execute: async (_args, { callId, signal }) => {
      appendFileSync(join(dir, callId), `${process.pid} start\n`);
      onStart(callId);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, BODY_MS);
        signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
      });
      appendFileSync(join(dir, callId), `${process.pid} end\n`);
      return `${callId} done`;
    },
  });
  return createPipeline({ tools: [op], journal, approvalSecret: SECRET, leaseMs: STALL_LEASE_MS });
}
