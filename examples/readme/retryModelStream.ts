// examples/readme/retryModelStream.ts
// The README's recipe for retrying a model stream, run: the stream sends calls a and b, fails, and sent
// again sends a, b and c. With the recipe each call runs once and has one result. A response that the
// retry regenerated (other ids) fails with a SourceError holding the results so far. Then the two
// placements the README warns against, measured: retry after the operator re-runs tools, retry before
// it without the recipe answers the calls sent again with duplicate_id.
import assert from 'node:assert/strict';
import { concatMap, concatWith, defer, EMPTY, filter, from, lastValueFrom, map, retry, throwError, timer, toArray, type Observable, type ObservableInput } from 'rxjs';
import { z } from 'zod';
import { createPipeline, defineTool, SourceError, type ToolCall } from 'toolstream';

const bodies: string[] = [];
const lookup = defineTool({
  name: 'lookup',
  description: 'Look a word up',
  input: z.object({ word: z.string() }),
  mode: 'parallel',
  execute: ({ word }) => (bodies.push(word), `definition of ${word}`),
});
const pipeline = createPipeline({ tools: [lookup] });

const call = (id: string): ToolCall => ({ id, name: 'lookup', args: { word: id.slice(-1) } });
/** A model whose n-th request streams `responses[n]`'s calls, a millisecond apart; one that ends in `!` fails there. */
function model(responses: readonly string[]) {
  let request = 0;
  return {
    open: (): Observable<ToolCall> => {
      const response = responses[request++]!;
      const calls = response.replace('!', '').split(' ').filter(Boolean).map(call);
      return from(calls).pipe(
        concatMap((c) => timer(1).pipe(map(() => c))),
        concatWith(response.endsWith('!') ? throwError(() => new Error('connection reset')) : EMPTY),
      );
    },
  };
}

// #region readme
class ResponseRegenerated extends Error {}

/**
 * A model stream, opened again when it fails (`count` more times, `delayMs` apart). A call it sends
 * again — the same position in the response, id and arguments — is skipped: it was answered already.
 * Another call at such a position means the response was regenerated: the stream fails, because
 * answering it would answer calls of a response the model no longer holds.
 */
function retryModelStream(open: () => ObservableInput<ToolCall>, { count = 2, delayMs = 500 } = {}): Observable<ToolCall> {
  return defer(() => {
    const passed: ToolCall[] = []; // what this stream passed on, by position in the response
    const attempt = defer(() => {
      let position = 0;
      return from(open()).pipe(
        filter((call) => {
          const earlier = passed[position++];
          if (earlier === undefined) return passed.push(call) > 0;
          if (earlier.id === call.id && JSON.stringify(earlier.args) === JSON.stringify(call.args)) return false;
          throw new ResponseRegenerated(`the retried response sent ${call.id} where ${earlier.id} was`);
        }),
      );
    });
    const delay = (error: unknown) => (error instanceof ResponseRegenerated ? throwError(() => error) : timer(delayMs));
    return attempt.pipe(retry({ count, delay }));
  });
}

const resumed = model(['toolu_a toolu_b !', 'toolu_a toolu_b toolu_c']); // fails once, then sends it all again
const results = await lastValueFrom(retryModelStream(resumed.open, { delayMs: 10 }).pipe(pipeline.operator(), toArray()));
// a, b, c: ok, and each body ran once, though the stream sent a and b twice

const regenerated = model(['toolu_a toolu_b !', 'toolu_x toolu_y toolu_z']); // the retry got another response
const failure = await lastValueFrom(retryModelStream(regenerated.open, { delayMs: 10 }).pipe(pipeline.operator())).catch((error: unknown) => error);
// a SourceError: a and b were answered (the subscriber has their results), its cause the ResponseRegenerated
// #endregion readme

assert.deepEqual(results.map((r) => `${r.id}:${r.status}`), ['toolu_a:ok', 'toolu_b:ok', 'toolu_c:ok']);
// Three bodies for the resumed response; then a and b, the regenerated stream's first attempt, and nothing of its retry.
assert.deepEqual(bodies, ['a', 'b', 'c', 'a', 'b']);
assert.ok(failure instanceof SourceError);
assert.equal(failure.answered, 2);
assert.ok(failure.cause instanceof ResponseRegenerated);

// Never `retry` after the operator: the run is subscribed again, and every tool of the response runs again.
bodies.length = 0;
const afterOperator = model(['toolu_a toolu_b !', 'toolu_a toolu_b toolu_c']);
const rerun = await lastValueFrom(defer(afterOperator.open).pipe(pipeline.operator(), retry({ count: 1 }), toArray()));
assert.deepEqual(bodies, ['a', 'b', 'a', 'b', 'c']); // 5 bodies for 3 calls
assert.equal(rerun.length, 5);

// `retry` right before the operator, without the recipe: the calls sent again are answered duplicate_id.
bodies.length = 0;
const beforeOperator = model(['toolu_a toolu_b !', 'toolu_a toolu_b toolu_c']);
const twice = await lastValueFrom(defer(beforeOperator.open).pipe(retry({ count: 1 }), pipeline.operator(), toArray()));
assert.deepEqual(twice.map((r) => `${r.id}:${r.status === 'ok' ? 'ok' : r.error?.code}`), ['toolu_a:ok', 'toolu_b:ok', 'toolu_a:duplicate_id', 'toolu_b:duplicate_id', 'toolu_c:ok']);
assert.deepEqual(bodies, ['a', 'b', 'c']);
console.log('retryModelStream: a, b, c answered once each; a regenerated response fails with the results so far');
