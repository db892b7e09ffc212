/**
 * A small app that runs a model's program, made to be bundled (README, "Bundling"): the tests bundle it
 * with esbuild, as ESM and as CommonJS (so no top-level await), copy the bundle alone to an empty
 * directory and run it there with node.
 */
import { createPipeline, defineTool, runCodeTool } from 'toolstream';
import { createQuickJSRuntime } from 'toolstream/quickjs';
import { z } from 'zod';

const add = defineTool({
  name: 'add',
  description: 'Add two numbers',
  input: z.object({ a: z.number(), b: z.number() }),
  mode: 'parallel',
  execute: ({ a, b }) => a + b,
});

// What a model would send: a TypeScript program that calls the tools itself.
const program = `
const sums: number[] = await Promise.all([1, 2, 3].map((n) => tools.add({ a: n, b: 10 })));
return { sums, total: sums.reduce((x, y) => x + y, 0) };`;

async function main(): Promise<void> {
  const runtime = createQuickJSRuntime({ timeoutMs: 10_000 });
  const pipeline = createPipeline({ tools: [add, runCodeTool({ runtime })] });
  const [result] = await pipeline.run([{ id: 'call_1', name: 'run_code', args: { program } }]);
  console.log(result?.status, result?.content);
  await runtime.close();
}

void main();
