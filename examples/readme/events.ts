// examples/readme/events.ts
// The README's events and progress: a build tool that reports progress, watched as it runs.
import assert from 'node:assert/strict';
import { lastValueFrom, toArray } from 'rxjs';
import { z } from 'zod';
import { createPipeline, defineTool, type PipelineEvent } from 'toolstream';

const compile = async (_file: string, _signal: AbortSignal) => new Promise((resolve) => setTimeout(resolve, 5));

// #region readme
const build = defineTool({
  name: 'build',
  description: 'Compile the given files',
  input: z.object({ files: z.array(z.string()) }),
  mode: 'parallel',
  execute: async ({ files }, ctx) => {
    for (const [done, file] of files.entries()) {
      ctx.progress({ done, total: files.length, file }); // a no-op unless someone watches the events
      await compile(file, ctx.signal);
    }
    return `built ${files.length} files`;
  },
});

const pipeline = createPipeline({ tools: [build] });
const lines: string[] = [];
const events = pipeline.events([{ id: 'b1', name: 'build', args: { files: ['a.ts', 'b.ts'] } }]);
events.subscribe((e: PipelineEvent) => {
  if (e.type === 'started') lines.push(`▶ ${e.name}`);
  if (e.type === 'progress') lines.push(`  ${JSON.stringify(e.value)}`);
  if (e.type === 'result') lines.push(`■ ${e.name}: ${e.result.status}`);
});
// ▶ build
//   {"done":0,"total":2,"file":"a.ts"}
//   {"done":1,"total":2,"file":"b.ts"}
// ■ build: ok
// #endregion readme

await lastValueFrom(events.pipe(toArray())); // a second run, to wait for the end (each subscription is a run)
assert.deepEqual(lines, ['▶ build', '  {"done":0,"total":2,"file":"a.ts"}', '  {"done":1,"total":2,"file":"b.ts"}', '■ build: ok']);

// #region observers
const seen: string[] = [];
const watched = createPipeline({
  tools: [build],
  observers: [{ event: (e) => seen.push(`${e.type} #${e.index}`) }], // every run's events, run() included
});
const [result] = await watched.run([{ id: 'b2', name: 'build', args: { files: ['c.ts'] } }]);
// seen: received #0, decided #0, started #0, progress #0, finished #0, result #0
// #endregion observers

assert.equal(result!.status, 'ok');
assert.deepEqual(seen, ['received #0', 'decided #0', 'started #0', 'progress #0', 'finished #0', 'result #0']);
