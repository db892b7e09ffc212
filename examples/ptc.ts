// Programmatic tool calling: the "model" sends one run_code call whose program reads this repository's
// sources through the pipeline's own tools, and returns a small summary. Run with `npm run example:ptc`.
// Everything is local; a path outside the repository is denied by pathSandbox, inside the program too,
// and the program (and the model) see paths relative to the repository (`workspace`), never the host's.
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import {
  createPipeline,
  defineTool,
  ProgramError,
  runCodeTool,
  type ProgramOutput,
} from '../src/index.js';
import { pathSandbox } from '../src/node/index.js';
import { createQuickJSRuntime } from '../src/ptc/quickjs/index.js';

const root = fileURLToPath(new URL('..', import.meta.url));

const listFiles = defineTool({
  name: 'list_files',
  description: 'List the files of a directory (not recursive)',
  input: z.object({ dir: z.string().describe('A directory inside the repository') }),
  mode: 'parallel',
  execute: async ({ dir }) => (await fs.readdir(dir, { withFileTypes: true })).filter((e) => e.isFile()).map((e) => path.join(dir, e.name)),
});
const readFile = defineTool({
  name: 'read_file',
  description: 'Read a UTF-8 text file',
  input: z.object({ path: z.string() }),
  mode: 'parallel',
  execute: ({ path: file }, { signal }) => fs.readFile(file, { encoding: 'utf8', signal }),
});

const runtime = createQuickJSRuntime({ timeoutMs: 20_000 });
const pipeline = createPipeline({
  tools: [listFiles, readFile, runCodeTool({ runtime, maxParallelSubCalls: 8, workspace: root })],
  pre: [pathSandbox({ root })],
});

console.log('run_code is offered to the model with this description:\n');
console.log(pipeline.available.find((tool) => tool.name === 'run_code')!.description, '\n');

// What a model would write: many reads, one small answer.
const program = `
const files: string[] = (await tools.list_files({ dir: 'src/engine/stages' })).filter((f: string) => f.endsWith('.ts'));
const texts: string[] = await Promise.all(files.map((path) => tools.read_file({ path })));
const stats = files.map((file, i) => ({ file, lines: texts[i].split('\\n').length, exports: (texts[i].match(/^export /gm) ?? []).length }));
const escape = await tools.read_file({ path: '../../etc/passwd' }).catch((e: ToolCallError) => e.code);
console.log(\`read \${files.length} files, the escape attempt ended as: \${escape}\`);
return { totalLines: stats.reduce((sum, s) => sum + s.lines, 0), largest: stats.sort((a, b) => b.lines - a.lines).slice(0, 3) };
`;

const [result] = await pipeline.run([{ id: 'toolu_01', name: 'run_code', args: { program } }]);
console.log(`── what the model sees (${result!.status}) ──\n${result!.content}\n`);
if (result!.status === 'ok') {
  const { subCalls } = result!.value as ProgramOutput;
  console.log(`── the sub-call log, for the host (${subCalls.length} calls) ──`);
  for (const sub of subCalls) {
    console.log(`${sub.id.padEnd(12)} ${sub.name.padEnd(10)} ${sub.status.padEnd(7)} ${(sub.decision ?? '-').padEnd(5)} ${sub.durationMs.toFixed(1).padStart(6)} ms  ${JSON.stringify(sub.args)}`);
  }
} else if (result!.error.code === 'tool_error' && result!.error.cause instanceof ProgramError) {
  console.log('the program failed:', result!.error.cause.failure);
}

// A broken program: the model gets the failure with the line and column in its own source.
const [broken] = await pipeline.run([{ id: 'toolu_02', name: 'run_code', args: { program: 'const n: number = 1;\nreturn n.toFixed(2).missing.length;' } }]);
console.log(`\n── a broken program (${broken!.status}) ──\n${broken!.content}`);
await runtime.close();
