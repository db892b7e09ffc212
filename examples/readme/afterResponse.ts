// examples/readme/afterResponse.ts
// The README's `start` example, run: a read starts while the model's response still streams, a write only
// once it ended — and a response that breaks off never runs its write.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Observable } from 'rxjs';
import { z } from 'zod';
import { createPipeline, defineTool, type ToolCall } from 'toolstream';

const log: string[] = [];
const readFile = async (path: string) => (log.push(`read ${path}`), 'contents');
const writeFile = async (path: string) => (log.push(`write ${path}`), 'written');

// #region readme
const path = z.object({ path: z.string() });
// Reads start at once, while the model is still streaming the rest of its response.
const read = defineTool({ name: 'read_file', description: 'Read a file', input: path, mode: 'parallel', execute: ({ path }) => readFile(path) });
// A write waits until the response ended; if the stream breaks off, it is cancelled and never runs.
const write = defineTool({ name: 'write_file', description: 'Write a file', input: path, mode: 'exclusive', start: 'after-response', execute: ({ path }) => writeFile(path) });

const pipeline = createPipeline({ tools: [read, write] });
// #endregion readme

/** A model response streaming two calls, then ending (or breaking off) 30 ms later. */
const response = (breaksOff: boolean) =>
  new Observable<ToolCall>((subscriber) => {
    subscriber.next({ id: 'r', name: 'read_file', args: { path: 'todo.md' } });
    subscriber.next({ id: 'w', name: 'write_file', args: { path: 'notes.md' } });
    void sleep(30).then(() => {
      log.push('response ended');
      if (breaksOff) subscriber.error(new Error('the stream broke off'));
      else subscriber.complete();
    });
  });

const results = await pipeline.run(response(false));
assert.deepEqual(results.map((r) => r.status), ['ok', 'ok']);
assert.deepEqual(log, ['read todo.md', 'response ended', 'write notes.md']);

log.length = 0;
await assert.rejects(pipeline.run(response(true)), /the stream broke off/);
assert.deepEqual(log, ['read todo.md', 'response ended']); // the write never ran
console.log('afterResponse: writes waited for the response');
