import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const node = (args: string[]) => execFileSync(process.execPath, args, { cwd: root, encoding: 'utf8' });

describe('the published package', () => {
  it('builds, and its exports map serves ESM and CJS with the same named exports', () => {
    execFileSync('npx', ['tsup', '--silent'], { cwd: root, stdio: 'pipe' });
    const esm = node(['--input-type=module', '-e', "import * as t from 'toolstream'; console.log(Object.keys(t).sort().join())"]);
    const cjs = node(['-e', "console.log(Object.keys(require('toolstream')).sort().join())"]);
    expect(esm.trim()).toBe(cjs.trim());
    expect(esm.trim().split(',')).toEqual(expect.arrayContaining(['createPipeline', 'defineTool', 'executeTools', 'ConfigError']));
    const run = node([
      '--input-type=module',
      '-e',
      `import { createPipeline, defineTool } from 'toolstream'; import { z } from 'zod';
       const t = defineTool({ name: 'x', description: 'x', input: z.object({}), execute: () => 'built' });
       const [r] = await createPipeline({ tools: [t] }).run([{ id: '1', name: 'x', args: {} }]);
       console.log(r.content);`,
    ]);
    expect(run.trim()).toBe('built');

    // Subpath exports, both module systems, sharing one core: a call the Anthropic adapter marks as
    // cut off (an IncompleteArguments from its chunk) is recognised by the main entry's intake.
    for (const [subpath, name] of [['anthropic', 'fromAnthropicStream'], ['openai', 'fromOpenAIChatStream'], ['ai-sdk', 'fromAISDKStream'], ['mcp', 'mcpTools'], ['sqlite', 'sqliteJournal']]) {
      expect(node(['--input-type=module', '-e', `import { ${name} } from 'toolstream/${subpath}'; console.log(typeof ${name})`]).trim()).toBe('function');
      expect(node(['-e', `console.log(typeof require('toolstream/${subpath}').${name})`]).trim()).toBe('function');
    }
    const events = [
      { type: 'message_start', message: { id: 'm', type: 'message', role: 'assistant', content: [], model: 'x', stop_reason: null, stop_sequence: null, usage: {} } },
      { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 't1', name: 'x', input: {} } },
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"a":' } },
      { type: 'message_delta', delta: { stop_reason: 'max_tokens', stop_sequence: null }, usage: { output_tokens: 1 } },
      { type: 'message_stop' },
    ];
    const cutOff = (load: string) => `${load}
      const tool = t.defineTool({ name: 'x', description: 'x', input: zod.z.object({}), execute: () => 'ran' });
      const events = (async function* () { yield* ${JSON.stringify(events)}; })();
      t.createPipeline({ tools: [tool] }).run(a.fromAnthropicStream(events)).then((results) => console.log(results[0].error.code));`;
    const esmScript = cutOff("const [t, a, zod] = await Promise.all([import('toolstream'), import('toolstream/anthropic'), import('zod')]);");
    const cjsScript = cutOff("const t = require('toolstream'), a = require('toolstream/anthropic'), zod = require('zod');");
    expect(node(['--input-type=module', '-e', esmScript]).trim()).toBe('incomplete_args');
    expect(node(['--input-type=commonjs', '-e', cjsScript]).trim()).toBe('incomplete_args');

    // Both builds in one process (an ESM app, a dependency that requires the CJS build): brand checks
    // hold across them — a call cut off in the CJS adapter is recognised by the ESM core, a CJS
    // runCodeTool is bound by an ESM pipeline, and the ESM error classes recognise CJS errors.
    const mixed = cutOff(`import { createRequire } from 'node:module';
      const require = createRequire(import.meta.url);
      const [t, zod] = await Promise.all([import('toolstream'), import('zod')]);
      const a = require('toolstream/anthropic');
      const cjs = require('toolstream');
      const add = t.defineTool({ name: 'add', description: 'Add', input: zod.z.object({ a: zod.z.number() }), execute: ({ a }) => a + 1 });
      const runtime = cjs.createQuickJSRuntime();
      const [program] = await t.createPipeline({ tools: [add, cjs.runCodeTool({ runtime })] })
        .run([{ id: '1', name: 'run_code', args: { program: 'return await tools.add({ a: 1 })' } }]);
      await runtime.close();
      let configError; try { cjs.createPipeline({ tools: 'none' }); } catch (e) { configError = e; }
      const restricted = new cjs.RestrictionSet([{ scope: 'host', deny: ['add'] }]);
      const [denied] = await t.createPipeline({ tools: [add], restrictions: restricted }).run([{ id: '1', name: 'add', args: { a: 1 } }]);
      console.log(program.content, configError instanceof t.ConfigError, new t.IncompleteArguments('x', '') instanceof cjs.IncompleteArguments, denied.error.code);`);
    expect(node(['--input-type=module', '-e', mixed]).trim().split('\n')).toEqual(['2 true true restricted', 'incomplete_args']);

    // The QuickJS runtime finds its worker script and wasm beside the bundle, in both module systems.
    const program = (load: string) => `${load}
      const add = t.defineTool({ name: 'add', description: 'Add', input: zod.z.object({ a: zod.z.number() }), execute: ({ a }) => a + 1 });
      const runtime = t.createQuickJSRuntime();
      const pipeline = t.createPipeline({ tools: [add, t.runCodeTool({ runtime })] });
      pipeline.run([{ id: '1', name: 'run_code', args: { program: 'const n: number = await tools.add({ a: 2 }); return n * 2' } }])
        .then(([result]) => { console.log(result.content); return runtime.close(); });`;
    expect(node(['--input-type=module', '-e', program("const [t, zod] = await Promise.all([import('toolstream'), import('zod')]);")]).trim()).toBe('6');
    expect(node(['--input-type=commonjs', '-e', program("const t = require('toolstream'), zod = require('zod');")]).trim()).toBe('6');
  }, 90_000);
});
