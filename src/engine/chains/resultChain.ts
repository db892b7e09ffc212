import { identity, type MonoTypeOperatorFunction } from 'rxjs';
import type { ResultChainSettings } from '../settings.js';
import type { CallRecord } from '../records/callRecord.js';
import { renderRecordContent } from '../recordContent.js';
import { toResult } from '../stages/result.js';
import { ChainDeadline, chainTimers } from './chainDeadline.js';
import { ChainsByTool, type Chain } from './chainsByTool.js';
import { concurrentStage } from './concurrentStage.js';
import { answerOf, type PendingAnswers, type WaterfallFailure, type WaterfallOutcome } from './waterfall.js';
import { ChainAnswer } from '../../stream/chainAnswer.js';
import { describeValue } from '../../util/describe.js';
import { laterOrNow, Later, type MaybeLater } from '../../util/later.js';
import type { NextAnswer } from '../../types/answer.js';
import type { ResultDraft, ResultMiddleware } from '../../types/resultChain.js';
import type { ToolResult } from '../../types/toolResult.js';

/**
 * The result chain, the last thing before a result is frozen (`toResults` right after it): runs the
 * pipeline's `result` middleware, then the tool's own, over a {@link ResultDraft} of every finished
 * call, and writes the draft back to the record — or withholds the output when the chain failed.
 *
 * 1. A result replayed from a journal passes untouched: it was wrapped when it was first built.
 * 2. The chain runs whole (see {@link runResultChain}); a failure, or no answer within
 *    `policyTimeoutMs`, withholds an `ok` result's output (`policy_error`, `stage: 'result'`) and
 *    leaves a failed one as it was. Traced as the result stage's failure.
 * 3. Synchronous while every middleware answers at once; results leave in completion order.
 * With no result middleware anywhere (the pipeline's and every tool's empty) it is the identity.
 *
 * @example
 * ```ts
 * records$.pipe(postExecute(settings, signal), resultChain(settings, signal), toResults());
 * ```
 */
export function resultChain(settings: ResultChainSettings, signal: AbortSignal | undefined): MonoTypeOperatorFunction<CallRecord> {
  const { result, resultNames, tools, policyTimeoutMs, scheduler } = settings;
  if (result.length === 0 && ![...tools.values()].some((tool) => tool.chains?.result !== undefined)) return identity;
  const chains = new ChainsByTool('result', { middleware: result, names: resultNames });
  const timers = chainTimers(scheduler); // idle (no timer) whenever no chain is running

  return concurrentStage(
    (record, scope) => {
      if (record.verdict === 'replay') return;
      const chain = chains.of(record.tool);
      if (chain === undefined) return;
      try {
        renderRecordContent(record); // an `ok` value that cannot be rendered is an `invalid_output` now
        const draft = new Draft(record);
        const deadline = new ChainDeadline(scope, chain.names, policyTimeoutMs, timers);
        const retried = (policy: string) => record.addTrace({ stage: 'result', event: 'retry_refused', policy });
        const outcome = deadline.race(runResultChain(chain, draft, deadline.pending, retried), { current: () => draft });
        return laterOrNow(outcome, ({ failure }) => wrapped(record, draft, failure));
      } catch {
        return; // the stage's own machinery failed (a bug): the result goes on as it is, as post-execute's does
      }
    },
    () => false,
    signal,
  );
}

/**
 * Runs `chain` over `draft`, koa-compose's shape with one difference: a middleware that returns without
 * calling `next()` has the rest run after it (none can skip a later one). `next()` runs the rest and
 * gives the draft as a `NextAnswer` (await it or pipe it); the part a middleware started always
 * finishes before its own answer counts. A middleware answers with a value, a promise, or a stream
 * whose first value counts (see `toAnswer`). A throw, a rejection, a stream's error, a stream that
 * completed without answering, an answer that is neither nothing nor the draft, or `next()` twice is
 * the chain's failure (the first one is reported); subscribing again to what `next()` gave after it
 * failed is told to `onRetry` and gets the same error. Synchronous while every middleware answers at
 * once (see `runWaterfall`). Never throws or rejects.
 */
export function runResultChain(
  { middleware, names }: Chain<ResultMiddleware>,
  draft: ResultDraft,
  /** The middleware still answering (to blame one on a timeout, and to cancel their streams). */
  pending: PendingAnswers,
  /** Told when a middleware subscribed again to what its `next()` gave after that failed. */
  onRetry?: (policy: string) => void,
): MaybeLater<WaterfallOutcome<ResultDraft>> {
  let failure: WaterfallFailure | undefined;
  const fail = (policy: string, message: string, cause: unknown) => {
    failure ??= { policy, message, cause };
  };

  const dispatch = (i: number): MaybeLater<void> => {
    if (i === middleware.length) return;
    const name = names[i]!;
    let called = false;
    let downstream: MaybeLater<void>;
    const handOver = (): MaybeLater<void> => {
      called = true;
      return (downstream = dispatch(i + 1));
    };
    const next = (): NextAnswer<ResultDraft> => {
      const retried = onRetry === undefined ? undefined : () => onRetry(name);
      if (called) {
        fail(name, 'called next() twice', undefined);
        return new ChainAnswer<ResultDraft>(Later.rejected(new Error(`next() called twice in result middleware "${name}"`)), retried);
      }
      return new ChainAnswer(laterOrNow(handOver(), () => draft), retried);
    };
    /** Its answer is in: the rest of the chain runs now if it has not. */
    const settle = (returned: unknown): MaybeLater<void> => {
      if (returned !== undefined && returned !== draft) fail(name, `returned ${describeValue(returned)}, which is not the draft`, returned);
      return called ? downstream : handOver();
    };

    return answerOf(middleware[i]!, draft, next, i, name, pending, fail, settle);
  };

  return laterOrNow(dispatch(0), () => ({ decision: draft, failure }));
}

/** The chain settled: its draft becomes the record's content, value and meta, or the output is withheld. */
function wrapped(record: CallRecord, draft: Draft, failure: WaterfallFailure | undefined): void {
  const { content, meta } = draft;
  if (failure === undefined && typeof content !== 'string') failure = { policy: '(result)', message: `left content that is not a string (${describeValue(content)})`, cause: content };
  if (failure === undefined && (typeof meta !== 'object' || meta === null || Array.isArray(meta))) {
    failure = { policy: '(result)', message: `left meta that is not an object (${describeValue(meta)})`, cause: meta };
  }
  if (failure !== undefined) {
    record.addTrace({ stage: 'result', event: 'failed', policy: failure.policy, message: failure.message });
    if (record.status !== 'ok') return; // a failed result keeps its status, error and text
    const message = `The output of "${record.name}" was withheld: result middleware "${failure.policy}" ${failure.message} (middleware fail closed).`;
    record.content = message;
    record.value = undefined;
    record.fail('error', { code: 'policy_error', message, stage: 'result', policy: failure.policy, cause: failure.cause });
    return;
  }
  record.content = content;
  if (record.status === 'ok') record.value = draft.value;
  if (record.meta !== undefined || Object.keys(meta).length > 0) record.meta = meta;
}

/** The draft of one record's result: its changeable parts, and the result as built before the chain (on first read). */
class Draft implements ResultDraft {
  content: string;
  meta: Record<string, unknown>;
  value: unknown;
  #result: ToolResult | undefined = undefined;
  readonly #record: CallRecord;

  constructor(record: CallRecord) {
    this.#record = record;
    this.content = record.content!;
    this.meta = { ...record.meta };
    this.value = record.status === 'ok' ? record.value : undefined;
  }

  get result(): ToolResult {
    return (this.#result ??= toResult(this.#record));
  }
}
