import { Subject } from 'rxjs';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, type ToolCall, type ToolResult } from '../../src/index.js';

const body = vi.fn((args: unknown) => args);
const readFile = defineTool({
  name: 'read_file',
  description: 'read',
  input: z.object({ path: z.string(), lines: z.object({ from: z.number().int() }).optional(), mode: z.enum(['text', 'bytes']).default('text') }),
  mode: 'parallel',
  execute: body,
});
const pipeline = createPipeline({ tools: [readFile] });
const one = async (call: unknown): Promise<ToolResult> => (await pipeline.run([call as ToolCall]))[0]!;

describe('intake', () => {
  it('parses JSON string arguments and hands the body the schema output (defaults applied)', async () => {
    body.mockClear();
    const result = await one({ id: '1', name: 'read_file', args: '{"path":"a.txt"}' });
    expect(result.status).toBe('ok');
    expect(result.args).toEqual({ path: 'a.txt', mode: 'text' });
    expect(body).toHaveBeenCalledWith({ path: 'a.txt', mode: 'text' }, expect.anything());
  });

  it('treats blank argument strings as {}', async () => {
    const noArgs = defineTool({ name: 'now', description: 'now', input: z.object({}), execute: () => 'tick' });
    const [result] = await createPipeline({ tools: [noArgs] }).run([{ id: '1', name: 'now', args: '  ' }]);
    expect(result!.status).toBe('ok');
  });

  it('invalid JSON → invalid_json; the tool never runs', async () => {
    body.mockClear();
    const result = await one({ id: '1', name: 'read_file', args: '{"path": ' });
    expect(result.error?.code).toBe('invalid_json');
    expect(result.content).toMatch(/not valid JSON/);
    expect(result.started).toBe(false);
    expect(body).not.toHaveBeenCalled();
  });

  it('unknown tool → unknown_tool listing what is available', async () => {
    const result = await one({ id: '1', name: 'write_file', args: {} });
    expect(result.error).toMatchObject({ code: 'unknown_tool', available: ['read_file'] });
    expect(result.content).toBe('Unknown tool "write_file". Available tools: read_file.');
  });

  it('prototype keys are ordinary unknown names', async () => {
    for (const name of ['__proto__', 'constructor', 'toString']) {
      expect((await one({ id: '1', name, args: {} })).error?.code).toBe('unknown_tool');
    }
  });

  it('schema failure → invalid_args naming every zod issue path; the tool never runs', async () => {
    body.mockClear();
    const result = await one({ id: '1', name: 'read_file', args: { path: 7, lines: { from: 1.5 }, mode: 'hex' } });
    const error = result.error;
    if (error?.code !== 'invalid_args') throw new Error('expected invalid_args');
    expect(result.status).toBe('error');
    expect(error.issues.map((i) => i.path)).toEqual([['path'], ['lines', 'from'], ['mode']]);
    expect(result.content).toContain('Invalid arguments for tool "read_file":');
    expect(result.content).toContain('- path: ');
    expect(result.content).toContain('- lines.from: ');
    expect(result.content).toContain('- mode: ');
    expect(result.args).toEqual({ path: 7, lines: { from: 1.5 }, mode: 'hex' }); // the parsed, offending arguments
    expect(body).not.toHaveBeenCalled();
  });

  it('a malformed call → invalid_call, keeping its place', async () => {
    const results = await pipeline.run([null, 'x', { name: 'read_file' }, { id: '', name: 'read_file' }] as unknown as ToolCall[]);
    expect(results.map((r) => r.error?.code)).toEqual(['invalid_call', 'invalid_call', 'invalid_call', 'invalid_call']);
    expect(results.map((r) => r.index)).toEqual([0, 1, 2, 3]);
  });

  it('a hostile getter on the call is an invalid_call, not a crash', async () => {
    const call = Object.defineProperty({}, 'id', {
      get() {
        throw new Error('gotcha');
      },
    });
    expect((await one(call)).error?.code).toBe('invalid_call');
  });

  it('a repeated id → duplicate_id for the later call', async () => {
    const results = await pipeline.run([
      { id: 'same', name: 'read_file', args: { path: 'a' } },
      { id: 'same', name: 'read_file', args: { path: 'b' } },
    ]);
    expect(results.map((r) => r.status)).toEqual(['ok', 'error']);
    expect(results[1]!.error?.code).toBe('duplicate_id');
  });

  it('intake errors cancel nothing: they are the model’s to fix, not execution failures', async () => {
    const results = await pipeline.run([
      { id: '1', name: 'nope', args: {} },
      { id: '2', name: 'read_file', args: { path: 'ok' } },
    ]);
    expect(results.map((r) => r.status)).toEqual(['error', 'ok']);
  });

  it('a schema that throws is the tool’s fault: tool_error, never a stream error', async () => {
    const broken = defineTool({
      name: 'broken',
      description: 'b',
      input: z.object({}).refine(() => {
        throw new Error('refinement bug');
      }),
      execute: () => 1,
    });
    const [result] = await createPipeline({ tools: [broken] }).run([{ id: '1', name: 'broken', args: {} }]);
    expect(result!.error?.code).toBe('tool_error');
    expect(result!.content).toContain('refinement bug');
  });
});

describe('duplicate ids', () => {
  it('an id among the last 10,000 is refused though its result went out long ago: the body never runs twice for it', async () => {
    const runs: string[] = [];
    const write = defineTool({ name: 'write', description: 'w', input: z.object({ path: z.string() }), mode: 'parallel', execute: ({ path }) => (runs.push(path), path) });
    const calls = new Subject<ToolCall>();
    const results: ToolResult[] = [];
    const done = new Promise<void>((complete) => calls.pipe(createPipeline({ tools: [write] }).operator()).subscribe({ next: (result) => results.push(result), complete }));
    calls.next({ id: 'before', name: 'write', args: { path: 'p0' } });
    calls.next({ id: 'x', name: 'write', args: { path: 'first' } });
    await vi.waitFor(() => expect(results).toHaveLength(2)); // released: x's result is out
    for (let i = 1; i < 10_000; i++) calls.next({ id: `c${i}`, name: 'write', args: { path: `p${i}` } });
    // x is 10,000 ids back, the promise's edge; and 10,001 ids were taken, so the window's newer
    // generation has just turned and holds one id: x is found in the older one, the window at its smallest.
    calls.next({ id: 'x', name: 'write', args: { path: 'again' } });
    calls.complete();
    await done;
    expect(results).toHaveLength(10_002);
    expect(results[1]!.status).toBe('ok');
    expect(results.at(-1)!.error?.code).toBe('duplicate_id');
    expect(runs.filter((path) => path === 'first' || path === 'again')).toEqual(['first']);
  });

  it('are forgotten past 20,000 ids, so memory stays bounded on endless streams', async () => {
    const calls = Array.from({ length: 20_001 }, (_, i) => ({ id: `c${i}`, name: 'read_file', args: { path: 'a' } }));
    const results = await pipeline.run([...calls, { id: 'c20000', name: 'read_file', args: { path: 'b' } }, { id: 'c0', name: 'read_file', args: { path: 'c' } }]);
    expect(results.at(-2)!.error?.code).toBe('duplicate_id'); // recent: detected
    expect(results.at(-1)!.status).toBe('ok'); // 20,001 ids ago: its result is long out
  });
});
