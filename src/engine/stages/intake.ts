import { defer, map, type OperatorFunction } from 'rxjs';
import { safeParse } from 'zod/v4/core';
import type { AnyTool } from '../../types/tool.js';
import { availableTools, type IntakeSettings } from '../settings.js';
import type { Decision } from '../../types/decision.js';
import type { RestrictionSet } from '../../util/restrictionSet.js';
import { IncompleteArguments } from '../../util/incompleteArguments.js';
import type { ArgsIssue } from '../../types/toolError.js';
import { CallRecord } from '../records/callRecord.js';
import { cut, describeError, describeValue, quote } from '../../util/describe.js';
import { formatIssues } from '../../util/formatIssues.js';
import { deepFreeze, snapshotArgs } from '../../util/snapshot.js';
import { RecentIds } from '../../util/recentIds.js';
import { allowsEveryCall } from './preExecute.js';

/** Duplicate detection remembers at least this many recent ids per subscription, at most twice as many (memory stays bounded). */
const DUPLICATE_WINDOW = 10_000;

/** How many tool names an `unknown_tool` message lists before it summarises. */
const LISTED_TOOLS = 30;

/**
 * The intake stage: numbers each call in arrival order and admits it, or decides its error result.
 *
 * 1. Anything that is not a `{ id: string, name: string }` object → `invalid_call`.
 * 2. An id among the last 10,000 ids of this subscription (at least; up to 20,000, as the window turns
 *    in two generations; a repeat refused here does not count) → `duplicate_id`. Results are matched
 *    back by id, and a body must not run twice for one id even once its result is out; the window
 *    keeps memory bounded on endless streams (`RecentIds`).
 * 3. A name no tool has → `unknown_tool`, listing the available names; a tool the restriction set hides
 *    in this scope → a `denied` result with code `restricted` (and it is not listed as available).
 * 4. `args` as a string is parsed as JSON (blank means `{}`, as providers send for no arguments);
 *    anything else is copied as JSON data. Either way the pipeline owns the result, deep-frozen: the
 *    caller changing its object after emitting the call changes nothing. Invalid JSON, or a value
 *    without a JSON form → `invalid_json`.
 * 5. The tool's zod schema validates the arguments; failure → `invalid_args` with every issue's path,
 *    and the body receives the schema's output (defaults and transforms applied), deep-frozen too.
 * A record that fails is finished: no later stage runs its tool. Nothing a model sends makes this
 * stage throw. The counter and the seen ids live per subscription.
 *
 * @example
 * ```ts
 * calls$.pipe(intake(settings)).subscribe((record) => record.status); // undefined when admitted
 * ```
 */
export function intake(settings: IntakeSettings): OperatorFunction<unknown, CallRecord> {
  const { tools, restrictions, clock } = settings;
  const available = Object.freeze(availableTools(settings).map((tool) => tool.name));
  // Without policies the decision of every admitted call is known now: the pre stage is the identity.
  const admittedAs = allowsEveryCall(settings) ? 'allow' : undefined;
  return (source) =>
    defer(() => {
      let index = 0;
      const seenIds = new RecentIds(DUPLICATE_WINDOW);
      return source.pipe(map((call) => admit(call, index++, seenIds, tools, available, restrictions, admittedAs, clock)));
    });
}

function admit(
  call: unknown,
  index: number,
  seenIds: RecentIds,
  tools: ReadonlyMap<string, AnyTool>,
  available: readonly string[],
  restrictions: RestrictionSet | undefined,
  admittedAs: Decision | undefined,
  clock: () => number,
): CallRecord {
  const receivedAt = clock();
  // Each field read once: a hostile getter or Proxy becomes an `invalid_call`, not a crash. Into locals,
  // not an object: this runs once per call.
  let id: unknown, name: unknown, args: unknown, turn: unknown;
  if (typeof call === 'object' && call !== null) {
    try {
      ({ id, name, args, turn } = call as Record<string, unknown>);
    } catch {
      id = name = args = turn = undefined;
    }
  }
  const record = new CallRecord(
    index,
    typeof id === 'string' ? id : `invalid_call_${index}`,
    typeof name === 'string' ? name : '',
    args,
    receivedAt,
    clock,
  );
  if (typeof turn === 'string') record.turn = turn;
  if (typeof id !== 'string' || id === '' || typeof name !== 'string' || (turn !== undefined && typeof turn !== 'string')) {
    return reject(record, {
      code: 'invalid_call',
      message: `Malformed tool call: expected an object with a non-empty string "id", a string "name" and, if any, a string "turn"; received ${describeValue(call)}.`,
    });
  }
  if (!seenIds.add(id)) {
    return reject(record, { code: 'duplicate_id', message: `Duplicate tool call id ${quote(id)}: each call needs its own id.` });
  }

  const tool = tools.get(name);
  if (tool === undefined) {
    const listed = available.slice(0, LISTED_TOOLS).join(', ');
    const more = available.length > LISTED_TOOLS ? ` and ${available.length - LISTED_TOOLS} more` : '';
    return reject(record, {
      code: 'unknown_tool',
      message: `Unknown tool ${quote(name)}. Available tools: ${listed || '(none)'}${more}.`,
      available,
    });
  }
  record.tool = tool;
  if (restrictions !== undefined) {
    const verdict = restrictions.resolve(name);
    if (!verdict.allowed) {
      record.fail('denied', {
        code: 'restricted',
        message: `Tool "${name}" is not available here. Available tools: ${available.slice(0, LISTED_TOOLS).join(', ') || '(none)'}.`,
        scope: verdict.scope,
        pattern: verdict.pattern,
      });
      record.admittedAt = record.clock();
      return record;
    }
  }

  if (args instanceof IncompleteArguments) {
    return reject(record, {
      code: 'incomplete_args',
      message: `The arguments for tool "${name}" were cut off before they were complete (${cut(String(args.reason), 100)}), so it did not run. Send the call again, with complete arguments.`,
      reason: args.reason,
    });
  }

  let parsed: unknown;
  try {
    parsed = snapshotArgs(args);
  } catch (error) {
    const what = typeof args === 'string' ? 'are not valid JSON' : 'are not JSON data';
    return reject(record, {
      code: 'invalid_json',
      message: `The arguments for tool "${name}" ${what} (${cut(describeError(error), 200)}). Send a JSON object.`,
    });
  }
  record.args = parsed;
  if (typeof args !== 'string') record.rawArgs = parsed; // the caller's object is the caller's to change
  // The input form, for policies: what the model sent, before the schema's defaults and transforms.
  if (admittedAs === undefined) record.input = parsed;

  let outcome: ReturnType<typeof safeParse>;
  try {
    outcome = safeParse(tool.input, parsed);
  } catch (error) {
    // An async refinement or a throwing one: the tool's definition is at fault, not the model.
    return reject(record, {
      code: 'tool_error',
      message: `The input schema of tool "${name}" failed: ${describeError(error)}`,
      cause: error,
    });
  }
  if (!outcome.success) {
    const issues: readonly ArgsIssue[] = Object.freeze(
      outcome.error.issues.map(({ path, code, message }) => Object.freeze({ path: Object.freeze(path), code, message })),
    );
    return reject(record, {
      code: 'invalid_args',
      message: `Invalid arguments for tool "${name}":\n${formatIssues(issues)}`,
      issues,
    });
  }
  record.args = deepFreeze(outcome.data);
  record.decision = admittedAs;
  record.admittedAt = record.clock();
  return record;
}

function reject(record: CallRecord, error: Parameters<CallRecord['fail']>[1]): CallRecord {
  record.fail('error', error);
  record.admittedAt = record.clock();
  return record;
}
