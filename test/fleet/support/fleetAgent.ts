import { remoteTools, type RemoteTools } from '../../../src/bullmq/index.js';
import { createPipeline, type JournalStore, type Pipeline, type ToolCall } from '../../../src/index.js';
import { step, stepIdempotent } from './contracts.js';
import { SECRET } from './fleet.js';

/** Where an agent process finds the fleet and the turn (the test and its agent child share it). */
export interface AgentConfig {
  readonly url: string;
  /** The fleet's BullMQ prefix and queue. */
  readonly prefix: string;
  readonly queue: string;
  readonly journalPrefix: string;
  readonly turn: string;
}

export const APPROVAL_SECRET = 'the fleet fault tests sign approvals with this';
/** Short, so a dead agent's turn can be taken over soon. */
export const AGENT_LEASE_MS = 1500;

/**
 * The durable turn the killed agent runs, two calls at a time: a first pair (one idempotent, one not)
 * that finishes quickly, a long pair that is still running when the agent dies, and a last pair that
 * is not dispatched yet.
 */
export const agentTurn: readonly ToolCall[] = [
  { id: 'quick-idem', name: 'step_idempotent', args: { ms: 50, fail: false } },
  { id: 'quick', name: 'step', args: { ms: 50, fail: false } },
  { id: 'long', name: 'step', args: { ms: 1500, fail: false } },
  { id: 'long-idem', name: 'step_idempotent', args: { ms: 1500, fail: false } },
  { id: 'late', name: 'step', args: { ms: 50, fail: false } },
  { id: 'late-idem', name: 'step_idempotent', args: { ms: 50, fail: false } },
];

/** One agent "process": its own remote tools over the journal it is given, and its pipeline. */
export function fleetAgent(config: AgentConfig, journal: JournalStore): { readonly remote: RemoteTools; readonly pipeline: Pipeline } {
  const remote = remoteTools([step, stepIdempotent], { connection: { url: config.url }, queue: config.queue, prefix: config.prefix, secret: SECRET, reconcileMs: 200 });
  const pipeline = createPipeline({ tools: remote.tools, journal, approvalSecret: APPROVAL_SECRET, leaseMs: AGENT_LEASE_MS, concurrency: 2 });
  return { remote, pipeline };
}
