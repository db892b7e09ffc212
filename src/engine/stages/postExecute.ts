import { identity, type MonoTypeOperatorFunction } from 'rxjs';
import type { PostSettings } from '../settings.js';
import { retainText } from '../../util/textRetainer.js';
import type { CallRecord } from '../records/callRecord.js';
import { ChainDeadline, chainTimers } from '../chains/chainDeadline.js';
import { concurrentStage, type StageScope } from '../chains/concurrentStage.js';
import { renderRecordContent } from '../recordContent.js';
import { runWaterfall, type WaterfallFailure, type WaterfallFold } from '../chains/waterfall.js';
import { laterOrNow, type Later } from '../../util/later.js';
import type { PostContext, PostDecision } from '../../types/policy.js';
import type { ToolCall } from '../../types/toolCall.js';

/**
 * The post-execute stage: runs the `post` policies as a waterfall over every finished call (denied and
 * failed ones too), then applies the output budget.
 *
 * 1. An `accept` may replace `content` (any status: a policy can add context to an error), `value`
 *    (only of an `ok` result: no policy turns a failure into success) and merge `meta`.
 * 2. A `block` withholds the output: an `ok` result becomes an error result (`blocked`) whose content is
 *    the feedback; a failed one keeps its status and error and shows the feedback. Blocks are folded
 *    monotonically: an `accept` further out cannot undo one (recorded as `relax_refused`).
 * 3. A policy that throws or returns a non-decision, or a chain that has not decided within
 *    `policyTimeoutMs`, blocks an `ok` result (`policy_error`, fail closed).
 * 4. Retention (`retention` option): the text budget cuts `content` with an in-band note and exact
 *    counts in `omitted` (items were already counted while the stream was collected).
 * Results leave in completion order (the reorder stage restores model order). With no post policies and
 * no budgets the stage is the identity.
 *
 * @example
 * ```ts
 * records$.pipe(executeCalls(settings, signal), postExecute(settings, signal), toResults(), reorderByIndex());
 * ```
 */
export function postExecute(settings: PostSettings, signal: AbortSignal | undefined): MonoTypeOperatorFunction<CallRecord> {
  const { post, postNames, retention, policyTimeoutMs, scheduler } = settings;
  if (post.length === 0 && retention.size === 0) return identity;
  const timers = chainTimers(scheduler); // idle (no timer) whenever no chain is running

  const retain = (record: CallRecord, startedAt: number) => {
    const budget = record.tool === undefined ? undefined : retention.get(record.tool.name);
    if (budget !== undefined && (budget.maxChars !== undefined || budget.maxLines !== undefined)) {
      const kept = retainText(record.content!, budget);
      if (kept.truncated) {
        record.content = kept.text;
        const omitted = (record.omitted ??= { items: 0, characters: 0, lines: 0 });
        omitted.characters = kept.omittedChars;
        omitted.lines = kept.omittedLines;
      }
    }
    record.postMs = record.clock() - startedAt;
  };

  /** Runs the post chain over one result: synchronously while every policy answers at once (see `runWaterfall`). */
  const judge = (record: CallRecord, scope: StageScope, startedAt: number): void | Later<void> => {
    const folder = new PostFold(record);
    const call: ToolCall = Object.freeze({ id: record.id, name: record.name, args: record.rawArgs });
    const deadline = new ChainDeadline(scope, postNames, policyTimeoutMs, timers);
    const view = new PostView(record, call, folder, deadline);
    const chain = runWaterfall(post, postNames, postNames.map(() => view), folder, 'post', deadline.pending);
    return laterOrNow(deadline.race(chain, folder), ({ failure }) => judged(record, folder, failure, startedAt));
  };

  const judged = (record: CallRecord, folder: PostFold, failure: WaterfallFailure | undefined, startedAt: number): void => {
    const wasOk = record.status === 'ok';
    if (failure !== undefined) {
      record.addTrace({ stage: 'post', event: 'failed', policy: failure.policy, message: failure.message });
      if (wasOk) {
        const message = `The output of "${record.name}" was withheld: post-execute policy "${failure.policy}" ${failure.message} (policies fail closed).`;
        withhold(record, message);
        record.fail('error', { code: 'policy_error', message, stage: 'post', policy: failure.policy, cause: failure.cause });
      }
    } else if (folder.blockedBy !== undefined) {
      const { policy, feedback } = folder.blockedBy;
      withhold(record, feedback);
      if (wasOk) record.fail('error', { code: 'blocked', message: feedback, policy });
    } else {
      record.content = folder.content;
      if (wasOk) record.value = folder.value;
      if (folder.meta !== undefined) record.meta = folder.meta;
    }
    retain(record, startedAt);
  };

  return concurrentStage(
    (record, scope) => {
      if (record.verdict === 'replay') return; // its content is what the model saw the first time: final
      const startedAt = record.clock();
      renderRecordContent(record);
      if (post.length > 0) {
        try {
          return judge(record, scope, startedAt);
        } catch {
          return; // the stage's own machinery failed (a bug): the result goes on as it is, as a rejection did
        }
      }
      retain(record, startedAt);
    },
    () => false,
    signal,
  );
}

function withhold(record: CallRecord, content: string): void {
  record.content = content;
  record.value = undefined;
  record.partial = undefined;
}

/** The post chain's fold: accepts apply their changes, inner first; the first block is final. */
class PostFold implements WaterfallFold<PostDecision> {
  content: string;
  value: unknown;
  meta: Record<string, unknown> | undefined = undefined;
  blockedBy: { readonly policy: string; readonly feedback: string } | undefined = undefined;

  constructor(private readonly record: CallRecord) {
    this.content = record.content!;
    this.value = record.value;
  }

  read(value: unknown): PostDecision | undefined {
    if (typeof value !== 'object' || value === null) return undefined;
    const { kind, feedback, content, meta } = value as Record<string, unknown>;
    if (kind === 'block') return typeof feedback === 'string' ? { kind, feedback } : undefined;
    if (kind !== 'accept') return undefined;
    if (content !== undefined && typeof content !== 'string') return undefined;
    if (meta !== undefined && (typeof meta !== 'object' || meta === null)) return undefined;
    const accept: { kind: 'accept'; content?: string; value?: unknown; meta?: Readonly<Record<string, unknown>> } = { kind };
    if (content !== undefined) accept.content = content;
    if (meta !== undefined) accept.meta = { ...(meta as Record<string, unknown>) };
    if (Object.hasOwn(value, 'value')) accept.value = (value as { value: unknown }).value;
    return accept;
  }

  end(): PostDecision {
    return { kind: 'accept' };
  }

  retryRefused(policy: string): void {
    this.record.addTrace({ stage: 'post', event: 'retry_refused', policy });
  }

  fold(policy: string, decision: PostDecision): PostDecision {
    const { record } = this;
    if (decision.kind === 'block') {
      record.addTrace({ stage: 'post', event: 'block', policy });
      this.blockedBy ??= { policy, feedback: decision.feedback };
    } else if (this.blockedBy !== undefined) {
      record.addTrace({ stage: 'post', event: 'relax_refused', policy, from: 'block', to: 'accept' });
    } else if (policy !== '(default)') {
      record.addTrace({ stage: 'post', event: 'accept', policy });
      if (decision.content !== undefined) this.content = decision.content;
      if ('value' in decision && record.status === 'ok') this.value = decision.value;
      if (decision.meta !== undefined) this.meta = { ...this.meta, ...decision.meta };
    }
    return this.current();
  }

  current(): PostDecision {
    const { blockedBy } = this;
    return blockedBy !== undefined ? { kind: 'block', feedback: blockedBy.feedback } : { kind: 'accept', content: this.content, value: this.value };
  }
}

/** What every post policy sees: the outcome as folded so far. */
class PostView implements PostContext {
  constructor(
    private readonly record: CallRecord,
    readonly call: ToolCall,
    private readonly folder: PostFold,
    private readonly deadline: ChainDeadline,
  ) {}

  get signal(): AbortSignal {
    return this.deadline.signal;
  }

  get tool() {
    return this.record.tool;
  }
  get args(): unknown {
    return this.record.args;
  }
  get index(): number {
    return this.record.index;
  }
  get status() {
    return this.record.status!;
  }
  get value(): unknown {
    return this.folder.value;
  }
  get content(): string {
    return this.folder.content;
  }
  get error() {
    return this.record.error;
  }
}
