import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, runCodeTool, type ProgramOutput, type ToolResult } from '../../src/index.js';
import { createQuickJSRuntime } from '../../src/ptc/quickjs/index.js';

// A tool with `start: 'after-response'` starts only once the model's response has ended. A program runs
// inside that response, so it cannot call one: the call is refused at once with a clear error (it used
// to wait for the program's own end, which never came: the program failed `timeout`, 30 s by default,
// while an exclusive one held its siblings back).

// The runtime's default time limit (30 s): each run below must end long before it.
const runtime = createQuickJSRuntime({ poolSize: 1 });
afterAll(() => runtime.close());

/** Fails the test instead of waiting for the program's 30 s time limit. */
async function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still running after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

function tools() {
  const ran: string[] = [];
  const write = defineTool({
    name: 'write_file',
    description: 'Write a file',
    input: z.object({ path: z.string() }),
    mode: 'exclusive',
    start: 'after-response',
    execute: ({ path }) => (ran.push(`write ${path}`), 'written'),
  });
  const read = defineTool({
    name: 'read_file',
    description: 'Read a file',
    input: z.object({ path: z.string() }),
    mode: 'parallel',
    execute: ({ path }) => (ran.push(`read ${path}`), `contents of ${path}`),
  });
  return { ran, write, read };
}

const output = (result: ToolResult | undefined): ProgramOutput => {
  expect(result?.status, result?.content).toBe('ok');
  return result!.value as ProgramOutput;
};

describe('a program that calls an after-response tool', () => {
  it('is refused at once with a clear error the program can catch; the tool never runs', async () => {
    const { ran, write, read } = tools();
    const pipeline = createPipeline({ tools: [read, write, runCodeTool({ runtime })] });
    const program = `
      const text = await tools.read_file({ path: 'a.txt' });
      try { await tools.write_file({ path: 'b.txt' }); return 'written'; }
      catch (e) { return { text, name: e.name, code: e.code, message: e.message }; }`;
    const [result] = await within(5000, pipeline.run([{ id: 'p1', name: 'run_code', args: { program } }]));
    const { value, subCalls } = output(result);
    expect(value).toEqual({
      text: 'contents of a.txt',
      name: 'ToolCallError',
      code: 'restricted',
      message: expect.stringMatching(/write_file.*after the model's response has ended.*call it directly/s),
    });
    expect(ran).toEqual(['read a.txt']);
    expect(subCalls.map(({ id, name, status, error }) => [id, name, status, error?.code])).toEqual([
      ['p1#1', 'read_file', 'ok', undefined],
      ['p1#2', 'write_file', 'denied', 'restricted'],
    ]);
  });

  it('uncaught, it ends the program at once (an exception naming the refusal), and the calls after the program run', async () => {
    const { ran, write, read } = tools();
    // `continue`: the failing program (an exclusive call) cancels nothing, so the calls behind it show they were not held up.
    const pipeline = createPipeline({ tools: [read, write, runCodeTool({ runtime })], onError: 'continue' });
    const results = await within(
      5000,
      pipeline.run([
        { id: 'p1', name: 'run_code', args: { program: `await tools.write_file({ path: 'b.txt' }); return 'done'` } },
        { id: 'r1', name: 'read_file', args: { path: 'c.txt' } },
        { id: 'w1', name: 'write_file', args: { path: 'd.txt' } },
      ]),
    );
    expect(results.map((r) => [r.id, r.status, r.error?.code])).toEqual([
      ['p1', 'error', 'tool_error'],
      ['r1', 'ok', undefined],
      ['w1', 'ok', undefined], // called directly, it starts once the response (the source) ended
    ]);
    expect(results[0]!.content).toMatch(/The program failed \(exception\): ToolCallError \[restricted\]: .*write_file/);
    expect(ran).toEqual(['read c.txt', 'write d.txt']);
  });

  it("is not among the program's declared tools; the description names it as one to call directly", () => {
    const { write, read } = tools();
    const pipeline = createPipeline({ tools: [read, write, runCodeTool({ runtime })] });
    const description = pipeline.available.find((tool) => tool.name === 'run_code')!.description;
    expect(description).toContain('read_file(args:');
    expect(description).not.toContain('write_file(args:');
    expect(description).toMatch(/Not callable from a program.*write_file/s);
  });
});
