/**
 * The tools and the turn of the real-process tests: bodies with side effects a test can count. Each
 * body appends a line to a file named for its call, then takes a few milliseconds — so a process
 * killed "during a body" has often, but not always, left its mark. None but `fetch` is idempotent.
 */
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { askTools, createPipeline, defineTool, suspendApprovals, type JournalStore, type ToolCall } from '../../../src/index.js';

export const SECRET = 'the secret of the real-process tests, 32+ bytes';
/**
 * Long, so no live driver loses its lease to a stall of a loaded machine (a lease that expires under a
 * running driver lets another process in: what leases trade for liveness). The SIGKILL test moves its
 * own clock past a dead driver's lease instead of waiting for it.
 */
export const LEASE_MS = 10_000;

const input = z.object({ ms: z.number() });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The tools, marking their runs in `dir` (one file per call id). */
export function crashTools(dir: string) {
  const mark = (id: string) => appendFileSync(join(dir, id), 'ran\n');
  const body = (name: string) => async ({ ms }: z.infer<typeof input>, ctx: { readonly callId: string }) => {
    mark(ctx.callId);
    await sleep(ms);
    return `${name} done`;
  };
  return [
    defineTool({ name: 'charge', description: 'charges a card', input, mode: 'parallel', execute: body('charge') }),
    defineTool({ name: 'email', description: 'sends an e-mail', input, mode: 'exclusive', execute: body('email') }),
    defineTool({ name: 'fetch', description: 'reads a page', input, mode: 'parallel', idempotent: true, execute: body('fetch') }),
    defineTool({ name: 'write', description: 'writes a file', input, mode: 'exclusive', execute: body('write') }),
  ];
}

/** A turn of ten calls: parallel groups between exclusive barriers, bodies of 1–4 ms. */
export const crashTurn: readonly ToolCall[] = [
  ['fetch', 3], ['charge', 2], ['charge', 4], ['email', 2], ['fetch', 1],
  ['charge', 3], ['email', 3], ['charge', 2], ['fetch', 4], ['charge', 1],
].map(([name, ms], i) => ({ id: `c${i}`, name: name as string, args: { ms: ms as number } }));

/** The pipeline both the child and the test build on a journal: `write` needs an approval, and suspends. */
export function crashPipeline(journal: JournalStore, dir: string) {
  return createPipeline({ tools: crashTools(dir), journal, approvalSecret: SECRET, leaseMs: LEASE_MS, concurrency: 3, pre: [askTools(['write'])], approve: suspendApprovals() });
}
