// The tools and pipeline the durable-loop tests share: reads run at once (parallel), a write is an
// exclusive call an approver suspends (so the reads after it wait behind it, suspended too).
import { z } from 'zod';
import type { ScriptCall } from './wire.js';
import { askTools, createPipeline, defineTool, suspendApprovals, type JournalStore, type JournalEntry, type TurnLease, type PruneOptions } from '../../../src/index.js';

export const SECRET = 'loop-test-secret-'.padEnd(40, 'x');

export const readNote = defineTool({
  name: 'read_note',
  description: 'Read a note',
  input: z.object({ path: z.string() }),
  mode: 'parallel',
  execute: ({ path }) => `contents of ${path}`,
});

/** Bodies of `write_note` that ran, in this process. */
export const written: string[] = [];
/** Called by each `write_note` body as it runs (a test's hook). */
export const onWrite: { hook: (() => void) | undefined } = { hook: undefined };
export const writeNote = defineTool({
  name: 'write_note',
  description: 'Write a note',
  input: z.object({ path: z.string(), text: z.string() }),
  execute: ({ path, text }) => {
    written.push(path);
    onWrite.hook?.();
    return `wrote ${text.length} characters to ${path}`;
  },
});

/** A pipeline whose writes suspend for approval, journaled in `journal`. */
export function durablePipeline(journal: JournalStore, more: { readonly leaseMs?: number; readonly tools?: readonly ReturnType<typeof defineTool>[] } = {}) {
  return createPipeline({
    tools: [readNote, writeNote, ...(more.tools ?? [])],
    journal,
    approvalSecret: SECRET,
    pre: [askTools(['write_note'])],
    approve: suspendApprovals(),
    ...(more.leaseMs === undefined ? {} : { leaseMs: more.leaseMs }),
  });
}

/**
 * A store as another process sees it: `takeOver()` makes the turn another's from then on — every
 * append and renewal of the lease held here is refused, as a store refuses a stale epoch.
 */
export class StolenStore implements JournalStore {
  #stolen = false;
  constructor(private readonly inner: JournalStore) {}
  takeOver(): void {
    this.#stolen = true;
  }
  append(key: string, entries: readonly JournalEntry[], lease: TurnLease) {
    return this.#stolen ? false : this.inner.append(key, entries, lease);
  }
  read(key: string) {
    return this.inner.read(key);
  }
  acquire(turn: string, owner: string, ms: number) {
    return this.inner.acquire(turn, owner, ms);
  }
  renew(lease: TurnLease, ms: number) {
    return this.#stolen ? false : this.inner.renew(lease, ms);
  }
  release(lease: TurnLease) {
    return this.inner.release(lease);
  }
  consume(turn: string, nonce: string) {
    return this.inner.consume(turn, nonce);
  }
  prune(options: PruneOptions) {
    return this.inner.prune(options);
  }
}

/** A response's calls: a read, a write that suspends, and a read that waits behind it (suspended too). */
export const CALLS: readonly ScriptCall[] = [
  { id: 'call_r1', name: 'read_note', args: { path: 'a.md' } },
  { id: 'call_w1', name: 'write_note', args: { path: 'b.md', text: 'hello' } },
  { id: 'call_r2', name: 'read_note', args: { path: 'c.md' } },
];

/** The history the request after `CALLS` must carry once the write is approved: each call, then each result, in order. */
export const EXPECTED = [
  { kind: 'call', id: 'call_r1' },
  { kind: 'call', id: 'call_w1' },
  { kind: 'call', id: 'call_r2' },
  { kind: 'result', id: 'call_r1', content: 'contents of a.md' },
  { kind: 'result', id: 'call_w1', content: 'wrote 5 characters to b.md' },
  { kind: 'result', id: 'call_r2', content: 'contents of c.md' },
];
