import type { OperatorFunction } from 'rxjs';
import type { SubBatch } from '../engine/pipelineHandle.js';
import type { PendingApproval } from '../types/pendingApproval.js';
import type { AnyTool, ToolContext } from '../types/tool.js';
import type { ToolCall } from '../types/toolCall.js';
import type { ToolResult } from '../types/toolResult.js';
import { callKey, slotsOf, toolKey, traitOf, withTrait } from '../util/slots.js';

/**
 * What a durable turn gives the call of a program: a journal for its sub-calls. Each run of the
 * program (the first, and one per resume) opens it anew and reads what the runs before journaled.
 */
export interface ProgramJournal {
  open(): Promise<ProgramRunJournal>;
}

/** One run of a program in a durable turn: its sub-calls' stages, journaled, and what it stopped on. */
export interface ProgramRunJournal {
  /** The stages of the program's sub-batch (`batch`, made by the program through its `PipelineHandle`), journaled under the program's call. */
  stages(batch: SubBatch, signal: AbortSignal): OperatorFunction<ToolCall, ToolResult>;
  /** The program makes its `position`-th call (from 0): bind it to what earlier runs journaled of it. Before it is dispatched. */
  place(position: number, name: string, args: unknown): void;
  /** The program stopped, waiting for these approvals of its sub-calls: the turn's journal lists them (durable when this resolves). */
  suspended(approvals: readonly PendingApproval[]): Promise<void>;
}

/**
 * The slot where a durable batch hands the call of a program (`run_code`) its journal. Registered, so a
 * `run_code` of one build finds the journal a durable turn of the other build set.
 *
 * @example
 * ```ts
 * if (isDurableProgram(record.tool)) record.set(PROGRAM_JOURNAL, programJournalFor(record));
 * ```
 */
export const PROGRAM_JOURNAL = callKey<ProgramJournal>('toolstream.programJournal');

/**
 * The journal of the program whose body received `ctx`; `undefined` outside a durable turn.
 *
 * @example
 * ```ts
 * const journal = await programJournalOf(ctx)?.open();
 * ```
 */
export function programJournalOf(ctx: ToolContext): ProgramJournal | undefined {
  return slotsOf(ctx)?.get(PROGRAM_JOURNAL);
}

/** The trait of a tool whose body is a program that journals its sub-calls (see `markDurableProgram`). */
const DURABLE_PROGRAM = toolKey<true>('toolstream.durableProgramTool');

/**
 * Marks a tool whose body is a program that journals its sub-calls: a durable turn hands its calls a
 * `ProgramJournal` and re-runs them on resume.
 *
 * @example
 * ```ts
 * return markDurableProgram(withHook(bound, bind));
 * ```
 */
export function markDurableProgram<T extends AnyTool>(tool: T): T {
  return withTrait(tool, DURABLE_PROGRAM, true);
}

/**
 * Whether `tool` was marked by `markDurableProgram` (in any build of toolstream).
 *
 * @example
 * ```ts
 * if (isDurableProgram(record.tool)) record.set(PROGRAM_JOURNAL, programJournalFor(record));
 * ```
 */
export function isDurableProgram(tool: AnyTool | undefined): boolean {
  return traitOf(tool, DURABLE_PROGRAM) === true;
}
