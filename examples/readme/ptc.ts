// examples/readme/ptc.ts — the README's programmatic tool calling example, run: a program lists a
// workspace's src/, reads every file, and returns where the TODOs are; the model gets only that.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile as read, rm, writeFile as write } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { defineTool, type Approver, type ProgramOutput } from 'toolstream';

const workspace = await mkdtemp(join(tmpdir(), 'readme-ptc-'));
await mkdir(join(workspace, 'src'));
await write(join(workspace, 'src/a.ts'), 'export const a = 1; // TODO: name it\n');
await write(join(workspace, 'src/b.ts'), 'export const b = 2;\n// TODO: test it\n');
const readFile = defineTool({ name: 'read_file', description: 'Read a file', input: z.object({ path: z.string() }), mode: 'parallel', execute: ({ path }) => read(path, 'utf8') });
const listFiles = defineTool({
  name: 'list_files',
  description: 'List the files of a directory',
  input: z.object({ dir: z.string() }),
  mode: 'parallel',
  execute: async ({ dir }) => (await readdir(dir)).map((name) => join(dir, name)),
});
const writeFile = defineTool({ name: 'write_file', description: 'Write a file', input: z.object({ path: z.string(), content: z.string() }), execute: ({ path, content }) => write(path, content) });
const approve: Approver = async () => 'rejected';

// #region readme
import { askTools, createPipeline, runCodeTool } from 'toolstream';
import { pathSandbox } from 'toolstream/node';
import { createQuickJSRuntime } from 'toolstream/quickjs';

const runtime = createQuickJSRuntime({ timeoutMs: 20_000, memoryLimitBytes: 64 * 2 ** 20, poolSize: 2 });
const pipeline = createPipeline({
  tools: [readFile, listFiles, writeFile, runCodeTool({ runtime, maxParallelSubCalls: 10 })],
  pre: [pathSandbox({ root: workspace }), askTools(['write_file'])],
  approve,
});
// … offer pipeline.available to the model; at shutdown: await runtime.close();
// #endregion readme

// The program the README shows (examples/readme/todo.program), as the model would send it in a run_code call.
const program = await read(new URL('./todo.program', import.meta.url), 'utf8');
const [result] = await pipeline.run([{ id: 'call_1', name: 'run_code', args: { program } }]);
await runtime.close();
await rm(workspace, { recursive: true, force: true });
assert.equal(result?.status, 'ok', result?.content);
const output = result!.value as ProgramOutput;
assert.deepEqual(output.value, { count: 2, first: [join(workspace, 'src/a.ts:1'), join(workspace, 'src/b.ts:2')] });
assert.deepEqual(output.logs, ['2 files scanned']);
