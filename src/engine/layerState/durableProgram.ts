import type { OperatorFunction } from 'rxjs';
import type { PipelineSettings } from '../settings.js';
import type { PendingApproval } from '../../types/pendingApproval.js';
import type { AnyTool, ToolContext } from '../../types/tool.js';
import type { ToolCall } from '../../types/toolCall.js';
import type { ToolResult } from '../../types/toolResult.js';
import type { CallRecord } from '../records/callRecord.js';

/**
 * The marks that let a program's call (`run_code`) and a durable turn find each other: on the tool,
 * and on the body's `ctx`. Registered (`Symbol.for`), like the pipeline hook, so they are the same
 * symbols in every build of toolstream loaded in one process.
 */
const PROGRAM_TOOL = Symbol.for('toolstream.durableProgramTool');
export const PROGRAM_JOURNAL: unique symbol = Symbol.for('toolstream.programJournal') as typeof PROGRAM_JOURNAL;

/**
 * What a durable turn gives the call of a program: a journal for its sub-calls. Each run of the
 * program (the first, and one per resume) opens it anew and reads what the runs before journaled.
 */
export interface ProgramJournal {
  open(): Promise<ProgramRunJournal>;
}

/** One run of a program in a durable turn: its sub-calls' stages, journaled, and what it stopped on. */
export interface ProgramRunJournal {
  /** The sub-calls' stages (no reordering), journaled under the program's call; `settings` are the program's. */
  stages(settings: PipelineSettings, signal: AbortSignal): OperatorFunction<ToolCall, ToolResult>;
  /** The program makes its `position`-th call (from 0): bind it to what earlier runs journaled of it. Before it is dispatched. */
  place(position: number, name: string, args: unknown): void;
  /** The program stopped, waiting for these approvals of its sub-calls: the turn's journal lists them (durable when this resolves). */
  suspended(approvals: readonly PendingApproval[]): Promise<void>;
}

/** Marks a tool whose body is a program that journals its sub-calls: a durable turn re-runs it on resume. */
export function markDurableProgram<T extends AnyTool>(tool: T): T {
  return Object.freeze({ ...tool, [PROGRAM_TOOL]: true });
}

export function isDurableProgram(tool: AnyTool | undefined): boolean {
  return tool !== undefined && (tool as unknown as Record<symbol, unknown>)[PROGRAM_TOOL] === true;
}

const journals = new WeakMap<CallRecord, ProgramJournal>();

/** A durable batch hands the call of a program its journal (read by the body through its `ctx`). */
export function attachProgramJournal(record: CallRecord, journal: ProgramJournal): void {
  journals.set(record, journal);
}

export function programJournalOfRecord(record: CallRecord): ProgramJournal | undefined {
  return journals.get(record);
}

/** The journal of the program whose body received `ctx`; `undefined` outside a durable turn. */
export function programJournalOf(ctx: ToolContext): ProgramJournal | undefined {
  return (ctx as unknown as { readonly [PROGRAM_JOURNAL]?: ProgramJournal })[PROGRAM_JOURNAL];
}
