import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { startReplayServer, type ReplayServer } from '../../support/replayServer.js';
import { CALLS, EXPECTED } from './fixture.js';
import { historyOf, PATHS, PROVIDERS, sseOf } from './wire.js';

// A durable loop across two processes, as a web app runs one: process A runs the loop until a write
// waits for approval and prints the continuation (JSON, what a browser would hold); process B — a
// fresh pipeline on the same SQLite journal and secret — re-enters it with the answer. The loopback
// server checks the request B sends: every call of the turn answered, in the model's order. A third
// process submitting the same continuation again is refused, and the server hears nothing more.

const root = fileURLToPath(new URL('../../..', import.meta.url));
const run = async (...args: string[]) => {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'test/adapters/loop/loopProcess.ts', ...args], { cwd: root, encoding: 'utf8' });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, any>;
};

let server: ReplayServer | undefined;
let dir: string | undefined;
afterEach(async () => {
  await server?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  server = dir = undefined;
});

describe.each(PROVIDERS)('%s: a durable loop across two processes', (provider) => {
  it('A suspends and prints the continuation; B continues it from the same journal; a second submit is refused', { timeout: 120_000 }, async () => {
    server = await startReplayServer([
      { path: PATHS[provider], sse: sseOf(provider, { text: 'Reading and writing.', calls: CALLS }, 1) },
      { path: PATHS[provider], sse: sseOf(provider, { text: 'All done.' }, 2) },
    ]);
    dir = mkdtempSync(join(tmpdir(), 'toolstream-loop-'));
    const db = join(dir, 'journal.db');

    const a = await run('start', provider, server.url, db);
    expect(a['outcome']).toBe('suspended');
    expect(a['continuation']).toMatchObject({ v: 1, provider, turn: 'conv-x/1', step: 1 });
    expect(a['pending'].map((p: any) => p.callId)).toEqual(['call_w1']);
    expect(a['written']).toEqual([]);
    expect(server.requests).toHaveLength(1);

    const input = join(dir, 'submit.json');
    writeFileSync(input, JSON.stringify({ messages: a['messages'], continuation: a['continuation'], answers: [{ token: a['pending'][0].token, answer: 'allowed-once' }] }));
    const b = await run('continue', provider, server.url, db, input);
    expect(b).toEqual({ outcome: 'done', step: 2, written: ['b.md'] });
    expect(server.requests).toHaveLength(2);
    expect(historyOf(provider, server.requests[1]!.body)).toEqual(EXPECTED);

    const c = await run('continue', provider, server.url, db, input);
    expect(c).toEqual({ refused: 'continuation_used', written: [] });
    expect(server.requests).toHaveLength(2);
  });
});
