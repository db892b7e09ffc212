// examples/readme/turns.ts
// The README's turn operators, run: the user's second message comes while the first turn's tools run.
// switchTurns aborts the first turn with the reason given: the call that had finished keeps its result,
// the one still running is answered `cancelled` with that reason, and the second turn runs after it.
// Every call the model sent has its result, so the next request is one the provider accepts.
import assert from 'node:assert/strict';
import { concatMap, from, lastValueFrom, map, Observable, timer, toArray } from 'rxjs';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { createPipeline, defineTool, switchTurns, type ToolCall } from 'toolstream';

const ran: string[] = [];
const readFile = defineTool({
  name: 'read_file',
  description: 'Read a file',
  input: z.object({ path: z.string(), ms: z.number() }),
  mode: 'parallel',
  execute: async ({ path, ms }, { signal }) => {
    ran.push(path);
    await sleep(ms, undefined, { signal }); // a slow read, stopped by its signal
    return `contents of ${path}`;
  },
});
const pipeline = createPipeline({ tools: [readFile] });

/** A model that answers each message with reads, streamed a millisecond apart; it stops when `signal` aborts. */
const responses: Record<string, ToolCall[]> = {
  'summarise the docs': [
    { id: 'toolu_1', name: 'read_file', args: { path: 'README.md', ms: 1 } },
    { id: 'toolu_2', name: 'read_file', args: { path: 'docs/DESIGN.md', ms: 10_000 } },
  ],
  'only the changelog, please': [{ id: 'toolu_3', name: 'read_file', args: { path: 'CHANGELOG.md', ms: 1 } }],
};
const modelStream = (message: string, signal: AbortSignal): Observable<ToolCall> =>
  new Observable<ToolCall>((subscriber) => {
    const onAbort = () => subscriber.error(signal.reason); // as an SDK's stream does (read no more by then)
    signal.addEventListener('abort', onAbort, { once: true });
    const stream = from(responses[message]!).pipe(concatMap((call) => timer(1).pipe(map(() => call)))).subscribe(subscriber);
    return () => (signal.removeEventListener('abort', onAbort), stream.unsubscribe());
  });
const userMessages$ = from([
  { text: 'summarise the docs', at: 0 },
  { text: 'only the changelog, please', at: 1000 }, // once README.md was read, while docs/DESIGN.md still is (on a busy machine too)
]).pipe(concatMap(({ text, at }) => timer(at).pipe(map(() => text))));

// #region readme
const results$ = userMessages$.pipe(
  switchTurns(pipeline, (message, { signal }) => modelStream(message, signal), {
    reason: (next) => `the user wrote: ${next}`,
  }),
);
const results = await lastValueFrom(results$.pipe(toArray()));
// toolu_1 ok; toolu_2 cancelled, error.abortReason 'the user wrote: only the changelog, please'; toolu_3 ok
// #endregion readme

assert.deepEqual(results.map((r) => `${r.id}:${r.status}`), ['toolu_1:ok', 'toolu_2:cancelled', 'toolu_3:ok']);
const cancelled = results[1]!.error;
assert.ok(cancelled?.code === 'cancelled');
assert.equal(cancelled.abortReason, 'the user wrote: only the changelog, please');
assert.equal(cancelled.started, true);
assert.equal(results[1]!.content, 'Cancelled while running: the run was aborted (the user wrote: only the changelog, please).');
assert.deepEqual(ran, ['README.md', 'docs/DESIGN.md', 'CHANGELOG.md']);
console.log('turns: the interrupted turn answered every call it had received; the next turn ran after it');
