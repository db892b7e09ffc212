import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, IncompleteArguments, RestrictionSet, toolSchemas } from '../../src/index.js';

const read = defineTool({
  name: 'read_file',
  description: 'Read a file',
  input: z.object({ path: z.string().describe('relative path'), encoding: z.enum(['utf8', 'base64']).default('utf8') }),
  execute: () => '',
});
const remove = defineTool({ name: 'delete_file', description: 'Delete a file', input: z.object({ path: z.string() }), execute: () => '' });

describe('toolSchemas', () => {
  it("renders each tool's zod schema as JSON Schema in its input form (what the model must send)", () => {
    const [schema] = toolSchemas([read]);
    expect(schema).toEqual({
      name: 'read_file',
      description: 'Read a file',
      inputSchema: {
        type: 'object',
        properties: { path: { type: 'string', description: 'relative path' }, encoding: { type: 'string', enum: ['utf8', 'base64'], default: 'utf8' } },
        required: ['path'], // extra keys are accepted (and stripped), so none is forbidden
      },
    });
  });

  it("offers a pipeline's available tools only: restrictions apply", () => {
    const pipeline = createPipeline({ tools: [read, remove], restrictions: new RestrictionSet([{ scope: 'host', deny: ['delete_*'] }]) });
    expect(pipeline.available.map((t) => t.name)).toEqual(['read_file']);
    expect(toolSchemas(pipeline).map((t) => t.name)).toEqual(['read_file']);
  });
});

describe('IncompleteArguments', () => {
  it('a call whose arguments were cut off gets incomplete_args and never runs', async () => {
    let ran = false;
    const tool = defineTool({ name: 't', description: 't', input: z.object({}), execute: () => (ran = true) });
    const [result] = await createPipeline({ tools: [tool] }).run([{ id: '1', name: 't', args: new IncompleteArguments('max_tokens', '{"pa') }]);
    expect(result!.status).toBe('error');
    expect(result!.error).toMatchObject({ code: 'incomplete_args', reason: 'max_tokens' });
    expect(result!.content).toContain('were cut off');
    expect(ran).toBe(false);
  });
});
