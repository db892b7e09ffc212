// examples/quick-start.ts
import { createPipeline, defineTool } from 'toolstream';
import { readFile } from 'node:fs/promises';
import { z } from 'zod';

const read = defineTool({
  name: 'read_file',
  description: 'Read a UTF-8 file',
  input: z.object({ path: z.string() }),
  mode: 'parallel', // safe to overlap; the default is 'exclusive'
  timeoutMs: 5_000,
  execute: ({ path }, { signal }) => readFile(path, { encoding: 'utf8', signal }),
});

const pipeline = createPipeline({ tools: [read], concurrency: 10 });

// With RxJS: toolCalls$.pipe(pipeline.operator()).subscribe(sendResultToModel);
const results = await pipeline.run([
  { id: 'call_1', name: 'read_file', args: '{"path":"package.json"}' },
  { id: 'call_2', name: 'read_file', args: { path: 42 } }, // → error result, code 'invalid_args'
]);
for (const r of results) console.log(r.id, r.status, r.status === 'ok' ? r.content.length : r.error.code);
