// examples/readme/timeline.ts
// The README's picture of the schedule: docs/timeline.svg is what this draws from a fixed set of results
// (a turn of a coding agent, timings written out so the picture is the same on every run). It checks
// the committed file is up to date; `npx tsx examples/readme/timeline.ts --write` writes it anew.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import type { ToolError, ToolResult, ToolMode } from 'toolstream';

const tools: { name: string; mode: ToolMode }[] = [
  { name: 'read_file', mode: 'parallel' },
  { name: 'search', mode: 'parallel' },
  { name: 'write_file', mode: 'exclusive' },
];

/** A result as the pipeline builds it, from its times in ms: received, decided, started, ended. */
function result(index: number, id: string, name: string, at: { received: number; decided: number; started?: number; ended?: number }, error?: ToolError, decision: 'allow' | 'ask' | 'deny' = 'allow'): ToolResult {
  const finished = (at.ended ?? at.decided) + 1;
  const started = at.started !== undefined;
  const timing = {
    receivedAt: at.received,
    startedAt: at.started,
    endedAt: at.ended,
    finishedAt: finished,
    durations: {
      intake: 1,
      policy: at.decided - at.received - 1,
      queue: started ? at.started! - at.decided : 0,
      limit: 0,
      execute: started ? at.ended! - at.started! : 0,
      post: started ? 1 : 0,
      total: finished - at.received,
    },
  };
  const base = { id, name, index, turn: 'msg_1', args: {}, originalArgs: {}, rewrittenBy: [], decision, trace: [], meta: {}, omitted: undefined, started, attempts: started ? 1 : 0, timing };
  if (error === undefined) return { ...base, status: 'ok', value: 'done', streamed: false, content: 'done' };
  const status = error.code === 'denied' ? 'denied' : 'error';
  return { ...base, status, error, content: error.message, incomplete: false };
}

const results: ToolResult[] = [
  result(0, 'call_1', 'search', { received: 0, decided: 4, started: 4, ended: 420 }),
  result(1, 'call_2', 'read_file', { received: 30, decided: 34, started: 34, ended: 210 }),
  result(2, 'call_3', 'read_file', { received: 60, decided: 64, started: 64, ended: 300 }),
  result(3, 'call_4', 'read_file', { received: 90, decided: 94, started: 210, ended: 380 }),
  result(4, 'call_5', 'search', { received: 120, decided: 124, started: 300, ended: 330 }, { code: 'tool_error', message: 'HTTP 503', cause: undefined }),
  result(5, 'call_6', 'read_file', { received: 150, decided: 154 }, { code: 'denied', message: 'outside the workspace', policy: 'pathSandbox', reasons: ['outside the workspace'], stage: 'pre' }, 'deny'),
  result(6, 'call_7', 'write_file', { received: 180, decided: 640, started: 640, ended: 820 }, undefined, 'ask'),
  result(7, 'call_8', 'search', { received: 200, decided: 204, started: 820, ended: 1320 }, { code: 'timeout', message: 'gave up after 500 ms', timeoutMs: 500 }),
  result(8, 'call_9', 'read_file', { received: 210, decided: 214, started: 820, ended: 900 }),
];

// #region readme
import { renderTimeline } from 'toolstream';

// `results` from pipeline.run(...); `tools` tells which calls were exclusive (pass pipeline.tools).
const svg = renderTimeline(results, { tools, title: 'One turn: 9 calls on a pool of 3' });
// #endregion readme

const file = new URL('../../docs/timeline.svg', import.meta.url);
if (process.argv.includes('--write')) writeFileSync(file, svg);
assert.equal(readFileSync(file, 'utf8'), svg, 'docs/timeline.svg is out of date: run `npx tsx examples/readme/timeline.ts --write`');
