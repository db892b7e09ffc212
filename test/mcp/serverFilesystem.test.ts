import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPipeline, type AnyTool } from '../../src/index.js';
import { mcpTools, type McpToolNotice } from '../../src/mcp/index.js';

// The official filesystem server, run as a child process over stdio as an MCP host would run it.
const serverEntry = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-filesystem/dist/index.js');

let root: string;
let client: Client;
let tools: AnyTool[];
const notices: McpToolNotice[] = [];

beforeAll(async () => {
  root = await realpath(await mkdtemp(path.join(tmpdir(), 'toolstream-fs-')));
  client = new Client({ name: 'toolstream-test', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [serverEntry, root], stderr: 'pipe' }));
  tools = await mcpTools(client, { prefix: 'fs__', onNotice: (notice) => notices.push(notice) });
});

afterAll(async () => {
  await client?.close();
  await rm(root, { recursive: true, force: true });
});

describe('mcpTools against @modelcontextprotocol/server-filesystem', () => {
  it('offers every tool the server lists', () => {
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['fs__read_text_file', 'fs__write_file', 'fs__list_directory']));
    expect(notices.filter((n) => n.kind === 'skipped')).toEqual([]);
  });

  it('gives the model the file as the server sent it for the model, and keeps the structured content as the value', async () => {
    const text = 'line "one"\n\tline two: {"not": "json"}\n';
    const file = path.join(root, 'notes.txt');
    await writeFile(file, text);

    const [result] = await createPipeline({ tools }).run([{ id: 'c1', name: 'fs__read_text_file', args: { path: file } }]);

    expect(result).toMatchObject({ status: 'ok', content: text, value: { content: text } });
  });

  it('runs a write through the pipeline and reads it back', async () => {
    const file = path.join(root, 'written.md');
    const pipeline = createPipeline({ tools });
    const [write, read] = await pipeline.run([
      { id: 'w', name: 'fs__write_file', args: { path: file, content: '# Title' } },
      { id: 'r', name: 'fs__read_text_file', args: { path: file } },
    ]);
    expect(write).toMatchObject({ status: 'ok', content: expect.stringContaining('Successfully wrote') });
    expect(read).toMatchObject({ status: 'ok', content: '# Title' });
  });
});
