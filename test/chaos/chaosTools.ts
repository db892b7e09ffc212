/**
 * The tools and turns of the chaos suite, shared by the test (the controller), its agent processes and
 * its worker processes. Six tools cover the mix that matters — parallel and exclusive, idempotent or
 * not, and two that ask for an approval — and every body keeps a side-effect log of its own: a line
 * when it starts, one when it ends (with the value it returns) or is aborted, each with its pid and the
 * call it ran for. The checks go by these lines, whatever any journal or result says.
 */
import { randomBytes } from 'node:crypto';
import { appendFileSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { z } from 'zod';
import {
  askTools,
  createPipeline,
  defineTool,
  implementTool,
  suspendApprovals,
  toolContract,
  type AnyTool,
  type JournalStore,
  type ToolCall,
  type ToolContext,
  type ToolDefinition,
  type ToolResult,
} from '../../src/index.js';
import type { Random } from './chaosRandom.js';

export const APPROVAL_SECRET = 'the chaos suite signs approvals with this, 32+ bytes';
export const FLEET_SECRET = 'the chaos suite signs its jobs with this, 32+ bytes long';
/** Short, so a killed or stalled agent's turn can be taken over half a second later. */
export const LEASE_MS = 500;
/** The workers' job lock: a killed or stalled worker's job is noticed within about a second. */
export const LOCK_MS = 500;
/** How many calls of one turn run at once in an agent. */
export const AGENT_CONCURRENCY = 3;

const input = z.object({ ms: z.int().nonnegative() });

/** What a tool is, apart from its body. */
interface ToolSpec {
  readonly name: string;
  readonly mode: 'parallel' | 'exclusive';
  readonly idempotent: boolean;
  /** Needs an approval: `askTools` asks, `suspendApprovals` suspends, the controller answers. */
  readonly asks: boolean;
  /** How often a turn holds it, relative to the others. */
  readonly weight: number;
}

export const SPECS: readonly ToolSpec[] = [
  { name: 'fetch', mode: 'parallel', idempotent: true, asks: false, weight: 3 },
  { name: 'charge', mode: 'parallel', idempotent: false, asks: false, weight: 3 },
  { name: 'publish', mode: 'parallel', idempotent: false, asks: true, weight: 1 },
  { name: 'email', mode: 'exclusive', idempotent: false, asks: false, weight: 1 },
  { name: 'reindex', mode: 'exclusive', idempotent: true, asks: false, weight: 1 },
  { name: 'write', mode: 'exclusive', idempotent: false, asks: true, weight: 1 },
];

export const specOf = (name: string): ToolSpec => SPECS.find((spec) => spec.name === name)!;

/** A tool's definition without its body: the same for a local tool and a fleet contract. */
const definitionOf = (spec: ToolSpec): Omit<ToolDefinition<typeof input>, 'execute'> => ({
  name: spec.name,
  description: `${spec.name} (the chaos suite's side effect)`,
  input,
  mode: spec.mode,
  idempotent: spec.idempotent,
  // `email` keeps the default of an exclusive tool (a failure cancels the rest of its turn), so cancel-rest is in the mix.
  ...(spec.name === 'email' ? {} : { onError: 'continue' as const }),
});

/** The call a body ran for, as its log names it: unique across turns and phases. */
export const callKey = (turn: string, callId: string) => `${turn}|${callId}`;

/** What a body returns: the call it ran for, its process, and a nonce of this run — so a result names the run that made it. */
export interface BodyValue {
  readonly call: string;
  readonly pid: number;
  readonly run: string;
}

/** One line of a body's side-effect log. */
export interface BodyLine {
  readonly e: 'start' | 'end' | 'abort';
  readonly tool: string;
  readonly call: string;
  readonly pid: number;
  /** What it returned (`end` only). */
  readonly value?: BodyValue;
}

/** A body: logs its start, works `ms` (honouring its signal), logs its end with the value it returns. */
function body(logDir: string, tool: string) {
  const log = (line: BodyLine) => appendFileSync(join(logDir, `${process.pid}.jsonl`), `${JSON.stringify(line)}\n`);
  return async ({ ms }: z.infer<typeof input>, ctx: ToolContext): Promise<BodyValue> => {
    const call = callKey(ctx.turn ?? '', ctx.callId);
    log({ e: 'start', tool, call, pid: process.pid });
    try {
      await delay(ms, undefined, { signal: ctx.signal });
    } catch (error) {
      log({ e: 'abort', tool, call, pid: process.pid });
      throw error;
    }
    const value: BodyValue = { call, pid: process.pid, run: randomBytes(6).toString('hex') };
    log({ e: 'end', tool, call, pid: process.pid, value });
    return value;
  };
}

/**
 * Every line the bodies of `logDir` wrote (one file per process). Each line is one `write(2)` of an
 * O_APPEND file, which a SIGKILL does not cut: a line that does not parse throws, rather than a start
 * going uncounted.
 */
export function readBodyLines(logDir: string): BodyLine[] {
  return readdirSync(logDir)
    .filter((file) => file.endsWith('.jsonl'))
    .flatMap((file) => readFileSync(join(logDir, file), 'utf8').split('\n'))
    .filter((text) => text !== '')
    .map((text) => JSON.parse(text) as BodyLine);
}

/** The tools of phase 1: local bodies in the agent process. */
export const localTools = (logDir: string): AnyTool[] => SPECS.map((spec) => defineTool({ ...definitionOf(spec), execute: body(logDir, spec.name) }));

/** The contracts of phase 2: the agent makes remote tools of them, the workers implement them. */
export const contracts = SPECS.map((spec) => toolContract(definitionOf(spec)));

/** The tools of a worker process of phase 2. */
export const workerTools = (logDir: string): AnyTool[] => contracts.map((contract) => implementTool(contract, body(logDir, contract.name)));

/** The pipeline every agent builds (and the controller, for `pendingApprovals`): durable, with approvals that suspend. */
export function chaosPipeline(journal: JournalStore, tools: readonly AnyTool[]) {
  return createPipeline({
    tools,
    journal,
    approvalSecret: APPROVAL_SECRET,
    leaseMs: LEASE_MS,
    concurrency: AGENT_CONCURRENCY,
    pre: [askTools(SPECS.filter((spec) => spec.asks).map((spec) => spec.name))],
    approve: suspendApprovals(),
  });
}

/**
 * A turn of 4–8 calls drawn from `random`: tools by weight, bodies of 20–400 ms, one in five slow
 * (0.6–1.2 s), so faults often land while bodies run.
 */
export function chaosTurn(random: Random): ToolCall[] {
  const total = SPECS.reduce((sum, spec) => sum + spec.weight, 0);
  return Array.from({ length: random.int(4, 8) }, (_, i) => {
    let at = random.float() * total;
    const spec = SPECS.find((candidate) => (at -= candidate.weight) < 0) ?? SPECS[0]!;
    const ms = random.chance(0.2) ? random.int(600, 1200) : random.int(20, 400);
    return { id: `c${i}`, name: spec.name, args: { ms } };
  });
}

/** A result as an agent process reports it to the controller: what the checks need. */
export interface ResultOutline {
  readonly id: string;
  readonly status: ToolResult['status'];
  /** The error's code, and its cause's (a `RemoteToolError`'s), when it failed. */
  readonly code?: string;
  readonly cause?: string;
  readonly value?: unknown;
}

export function outline(result: ToolResult): ResultOutline {
  if (result.status === 'ok') return { id: result.id, status: 'ok', value: result.value };
  const cause = (result.error as { cause?: { code?: unknown } }).cause?.code;
  return { id: result.id, status: result.status, code: result.error.code, ...(typeof cause === 'string' ? { cause } : {}) };
}
