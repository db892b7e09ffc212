import { asyncScheduler, type SchedulerLike } from 'rxjs';
import { ConfigError } from '../util/errors.js';
import { utf8 } from '../util/digest.js';
import { isPositiveDuration, MAX_TIMER_MS } from '../util/validate.js';
import type { JournalStore } from '../types/journal.js';
import { ApprovalTokens } from './approvalTokens.js';
import type { DurableSettings } from './settings.js';

/** `approvalTtlMs` unless set: a pending approval may be answered for a day. */
export const DEFAULT_APPROVAL_TTL_MS = 24 * 3_600_000;
/** `leaseMs` unless set: a turn whose driver died can be resumed half a minute later. */
export const DEFAULT_LEASE_MS = 30_000;

/** The options of `createPipeline` that make turns durable. */
export interface DurableOptions {
  readonly journal?: JournalStore;
  readonly approvalSecret?: string | Uint8Array;
  readonly approvalTtlMs?: number;
  readonly leaseMs?: number;
}

/**
 * The durability settings, or `undefined` without a journal. Eager, like every option. `scheduler` is
 * the pipeline's (validated with the other options): the lease is renewed on it.
 * @throws {ConfigError} naming the first bad option.
 */
export function resolveDurable(options: DurableOptions & { readonly scheduler?: SchedulerLike }): DurableSettings | undefined {
  const fail = (option: string, expected: string, received: unknown): never => {
    throw new ConfigError('createPipeline', option, expected, received);
  };
  const { journal, approvalSecret, approvalTtlMs = DEFAULT_APPROVAL_TTL_MS, leaseMs = DEFAULT_LEASE_MS } = options;
  if (journal === undefined) {
    for (const [option, value] of [['approvalSecret', approvalSecret], ['approvalTtlMs', options.approvalTtlMs], ['leaseMs', options.leaseMs]] as const) {
      if (value !== undefined) fail(option, 'set only with a `journal` (it belongs to durable turns)', value);
    }
    return undefined;
  }
  const store = journal as Partial<JournalStore> & { readonly lease?: unknown };
  for (const method of ['append', 'read', 'acquire', 'renew', 'release', 'consume', 'prune'] as const) {
    if (typeof store[method] === 'function') continue;
    // A store written for toolstream 0.1 (`lease(turn, owner, ms)`, no epochs): say what changed.
    if (typeof store.lease === 'function') fail('journal', 'a JournalStore of version 2: `lease` became `acquire` and `renew`, `append` and `release` take the lease (fencing), `prune` is new — see CHANGELOG.md, 0.2.0', journal);
    fail('journal', `a JournalStore (memoryJournal(), sqliteJournal(…), redisJournal(…), or one of your own); \`${method}\` is missing`, journal);
  }
  const secretBytes = typeof approvalSecret === 'string' ? utf8(approvalSecret).byteLength : approvalSecret instanceof Uint8Array ? approvalSecret.byteLength : -1;
  if (secretBytes < 32) fail('approvalSecret', 'a string or Uint8Array of at least 32 bytes (it signs approval tokens; keep it secret)', approvalSecret === undefined ? undefined : '(too short)');
  if (typeof approvalTtlMs !== 'number' || !Number.isFinite(approvalTtlMs) || approvalTtlMs <= 0) fail('approvalTtlMs', 'a positive number of milliseconds', approvalTtlMs);
  if (!isPositiveDuration(leaseMs)) fail('leaseMs', `1 to ${MAX_TIMER_MS} milliseconds`, leaseMs);
  return { store: journal, tokens: new ApprovalTokens(approvalSecret!), approvalTtlMs, leaseMs, scheduler: options.scheduler ?? asyncScheduler };
}
