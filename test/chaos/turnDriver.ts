/**
 * The controller's side of a turn: it has agents drive the turn until it has ended with no call
 * suspended, whatever happens to them. It runs the turn on an agent; a suspended turn is resumed with
 * the answers to what `pendingApprovals` lists; a command whose agent was killed, or stopped, is
 * followed by a resume on another agent (refused with `turn_leased` while the old lease lives: tried
 * again a little later); a run of a turn that was never written is run again. Every set of results any
 * agent gave out is kept, with the error codes the commands ended with, for the checks.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { PendingApproval, ToolCall } from '../../src/index.js';
import type { AgentCommand } from './agentChild.js';
import type { ProcessPool } from './chaosProcesses.js';
import type { Random } from './chaosRandom.js';
import type { ResultOutline } from './chaosTools.js';

export type Answer = 'allowed-once' | 'rejected';

/** One turn and everything the controller saw of it. */
export interface TurnRecord {
  readonly turn: string;
  readonly calls: readonly ToolCall[];
  /** The results of the command that ended the turn with no call suspended. */
  final: readonly ResultOutline[] | undefined;
  /** Every set of results a command gave out (a run's, a resume's, a `lease_lost` run's partial ones), in arrival order. */
  readonly outputs: (readonly ResultOutline[])[];
  /** The answers the controller sent, by call id. */
  readonly answers: Map<string, Answer>;
  /** The error codes commands ended with, counted; `killed` for a command whose agent died. */
  readonly errors: Map<string, number>;
  commands: number;
}

/** What driving turns needs. */
export interface DriveContext {
  readonly agents: ProcessPool;
  readonly random: Random;
  /** The approvals the turn waits for (read from the store by the controller). */
  readonly pending: (turn: string) => Promise<PendingApproval[]>;
  /** The controller's answer to a call's approval: a function of the seed and the call, the same every time it is asked. */
  readonly answerOf: (turn: string, callId: string) => Answer;
  /** A turn not ended by this time (epoch ms) is given up: its calls count as lost. */
  readonly deadline: () => number;
  /** Commands of stopped agents, still to answer: awaited before the checks. */
  readonly stragglers: Set<Promise<unknown>>;
}

/** A turn that needs this many commands is stuck (a stall costs ~20 `turn_leased` retries). */
const MAX_COMMANDS = 500;
let nextId = 0;

export function newTurn(turn: string, calls: readonly ToolCall[]): TurnRecord {
  return { turn, calls, final: undefined, outputs: [], answers: new Map(), errors: new Map(), commands: 0 };
}

const count = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);

/** Drives `record`'s turn until it ended with no call suspended, or its deadline passed. */
export async function driveTurn(context: DriveContext, record: TurnRecord): Promise<void> {
  const { random } = context;
  const { turn } = record;
  let op: 'run' | 'resume' = 'run';
  while (record.final === undefined && Date.now() < context.deadline() && record.commands < MAX_COMMANDS) {
    const id = nextId++;
    const command: AgentCommand = op === 'run' ? { id, op, turn, calls: record.calls } : { id, op, turn, answers: await answers(context, record) };
    const agent = await context.agents.pick(random);
    record.commands++;
    const sent = agent.send(command);
    const ended = sent.end.then((end) => {
      if (end.kind === 'killed') count(record.errors, 'killed');
      else {
        if (end.reply.error !== undefined) count(record.errors, end.reply.error);
        if (end.reply.results !== undefined) record.outputs.push(end.reply.results);
      }
      return end;
    });
    const first = await Promise.race([ended, sent.stalled.then(() => 'stalled' as const)]);
    if (first === 'stalled') {
      // Its agent was stopped: take the turn over elsewhere now; its reply, when it wakes, is still recorded.
      context.stragglers.add(ended);
      void ended.finally(() => context.stragglers.delete(ended));
      op = 'resume';
      continue;
    }
    if (first.kind === 'killed') {
      op = 'resume'; // or, when it died before writing anything, `turn_unknown`: run again
      await sleep(random.int(0, 200));
      continue;
    }
    const { reply } = first;
    if (reply.error === undefined) {
      if (!reply.results!.some((result) => result.status === 'suspended')) record.final = reply.results;
      op = 'resume';
      continue;
    }
    switch (reply.error) {
      case 'turn_unknown':
        op = 'run';
        break;
      case 'turn_leased':
        await sleep(random.int(80, 250)); // the dead or stopped agent's lease lives a little longer
        break;
      default:
        // turn_exists, lease_lost (this agent stalled and another took over), token_used (an answer a
        // killed resume journaled), or a finding the checks report
        op = 'resume';
        await sleep(random.int(30, 150));
    }
  }
}

/** The answers to every approval the turn waits for, as the controller decides them (and records them). */
async function answers(context: DriveContext, record: TurnRecord): Promise<{ token: string; answer: Answer }[]> {
  const pending = await context.pending(record.turn);
  return pending.map(({ token, callId }) => {
    const answer = context.answerOf(record.turn, callId);
    record.answers.set(callId, answer);
    return { token, answer };
  });
}

/**
 * Starts turns `lanes` at a time while `starting()` holds, each driven to its end; resolves once every
 * turn started has ended (or was given up). `make(n)` makes turn `n`.
 */
export async function driveTurns(context: DriveContext, lanes: number, starting: () => boolean, make: (n: number) => TurnRecord): Promise<TurnRecord[]> {
  const turns: TurnRecord[] = [];
  const lane = async () => {
    while (starting()) {
      const record = make(turns.length);
      turns.push(record);
      await driveTurn(context, record);
    }
  };
  await Promise.all(Array.from({ length: lanes }, lane));
  return turns;
}
