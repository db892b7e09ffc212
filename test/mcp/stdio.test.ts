import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createPipeline } from '../../src/index.js';
import { mcpTools } from '../../src/mcp/index.js';
import { stretched } from '../support/timing.js';

const fixture = fileURLToPath(new URL('./fixtures/server.mjs', import.meta.url));

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(condition: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = performance.now() + ms;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

let client: Client | undefined;
afterEach(async () => {
  await client?.close(); // closing twice is harmless; this only matters when a test failed midway
  client = undefined;
});

async function start() {
  const transport = new StdioClientTransport({ command: process.execPath, args: [fixture], stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  client = new Client({ name: 'toolstream-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport, stderr: () => stderr };
}

describe('mcpTools over stdio (a real server in a child process)', () => {
  it('lists the tools, runs calls through the pipeline, and leaves no process behind on close', async () => {
    const { client, transport, stderr } = await start();
    const pid = transport.pid!;
    expect(alive(pid)).toBe(true);

    const tools = await mcpTools(client, { prefix: 'mcp__fixture__', trustAnnotations: true });
    expect(tools.map((t) => [t.name, t.mode])).toEqual([
      ['mcp__fixture__add', 'parallel'],
      ['mcp__fixture__pid', 'parallel'],
      ['mcp__fixture__sleep', 'exclusive'],
    ]);

    const results = await createPipeline({ tools }).run([
      { id: 'c1', name: 'mcp__fixture__add', args: '{"a":2,"b":3}' },
      { id: 'c2', name: 'mcp__fixture__add', args: { a: 2, b: 'three' } },
      { id: 'c3', name: 'mcp__fixture__pid', args: '' },
    ]);
    expect(results[0]).toMatchObject({ status: 'ok', value: { sum: 5 } });
    expect(results[1]).toMatchObject({ status: 'error', error: { code: 'invalid_args' } });
    expect(results[1]?.content).toContain('- b:');
    expect(results[2]).toMatchObject({ status: 'ok', content: String(pid) });

    const ended = new Promise((resolve) => transport.stderr?.once('end', resolve));
    await client.close();
    await until(() => !alive(pid), stretched(5_000), `process ${pid} to exit`);
    await ended;
    // It exited when its stdin closed, not by the transport's SIGTERM fallback (2 s later): said by the
    // server itself, not told apart by the clock, which a busy machine stretches past 2 s.
    expect(stderr()).toMatch(/stdin closed\n$/);
  });

  it('cancels the request in the child process when the call times out', async () => {
    const { client, transport, stderr } = await start();
    const pid = transport.pid!;
    const tools = await mcpTools(client, { timeoutMs: 200, requestTimeoutMs: 60_000 });

    const [result] = await createPipeline({ tools }).run([{ id: 'c1', name: 'sleep', args: { ms: 30_000 } }]);

    expect(result).toMatchObject({ status: 'error', error: { code: 'timeout' } });
    await until(() => stderr().includes('sleep aborted'), 5_000, 'the handler to see its abort');
    await client.close();
    await until(() => !alive(pid), 5_000, `process ${pid} to exit`);
  });
});
