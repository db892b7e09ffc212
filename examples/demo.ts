// The demo: a model's streamed response with six tool calls, executed by toolstream while it streams;
// then its next response, one run_code call whose program makes the tool calls itself.
//
//   npm start                 replay examples/transcripts/anthropic-*.sse.txt (offline)
//   npm start -- --yes        approve the write without asking (without a terminal to ask at, it is rejected)
//   npm start -- --live       ask the real Anthropic API instead (needs ANTHROPIC_API_KEY)
//
// The transcript is in Anthropic's SSE wire format and is parsed by the official SDK's own parser, with
// a pause between events as a real stream has. It was written by a script for this demo (no network
// here to record one); the recorded fixtures the adapter tests use are read in place from ../shared/fixtures/streams/.
import Anthropic from '@anthropic-ai/sdk';
import { Stream } from '@anthropic-ai/sdk/core/streaming';
import type { RawMessageStreamEvent } from '@anthropic-ai/sdk/resources/messages';
import { readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lastValueFrom, tap, toArray } from 'rxjs';
import { createPipeline, renderTimeline, runCodeTool, terminalProgress, type PipelineEvent, type ProgramOutput, type ToolResult } from '../src/index.js';
import { createQuickJSRuntime } from '../src/ptc/quickjs/index.js';
import { fromAnthropicStream, toAnthropicToolResults, toAnthropicTools } from '../src/adapters/anthropic/index.js';
import { openWorkspace } from './workspace.js';

const flags = new Set(process.argv.slice(2));
if (flags.has('--live') && !process.env['ANTHROPIC_API_KEY']) {
  console.error('--live asks the real Anthropic API and needs an API key: set ANTHROPIC_API_KEY (and optionally ANTHROPIC_MODEL), or run without --live to replay the recorded response.');
  process.exit(1);
}
const t0 = performance.now();
// Each call's progress (terminalProgress): at a terminal a live line per call, updated in place, and
// each result's line as it is given out; in a pipe, a plain line per change. The demo's own lines go
// through it too, so they never break the live lines (and wait while the approval prompt is open).
const progress = terminalProgress(process.stdout);
const log = (text: string) => progress.log(`[${(performance.now() - t0).toFixed(0).padStart(5)} ms] ${text}`);

// A throwaway workspace with a few files, and real local tools on it (examples/workspace.ts); reads
// pause a little, to see them overlap. Writes ask for approval at the terminal (approved with --yes;
// rejected when there is no terminal to ask at); paths stay inside the workspace.
const workspace = await openWorkspace({ log, pauseMs: 250, yes: flags.has('--yes') });

// Programs run in QuickJS on a worker thread; their tool calls go through this same pipeline.
const runtime = createQuickJSRuntime({ timeoutMs: 20_000 });
const pipeline = createPipeline({
  tools: [...workspace.tools, runCodeTool({ runtime, workspace: workspace.root })],
  concurrency: 4,
  pre: workspace.pre,
  approve: workspace.approve,
});

// --- the model's stream: replayed, or live ---
async function* replay(file: string): AsyncIterable<RawMessageStreamEvent> {
  const transcript = await readFile(fileURLToPath(new URL(`transcripts/${file}`, import.meta.url)), 'utf8');
  const chunks = transcript.split(/(?<=\n)(?=event:)/); // one SSE event per chunk, paced like a stream
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const chunk = chunks.shift();
      if (chunk === undefined) return controller.close();
      await new Promise((resolve) => setTimeout(resolve, 8));
      controller.enqueue(new TextEncoder().encode(chunk));
    },
  });
  yield* Stream.fromSSEResponse<RawMessageStreamEvent>(new Response(body), new AbortController());
}

async function* live(): AsyncIterable<RawMessageStreamEvent> {
  const client = new Anthropic();
  yield* await client.messages.create({
    model: process.env['ANTHROPIC_MODEL'] ?? 'claude-sonnet-4-6',
    max_tokens: 1024,
    stream: true,
    tools: toAnthropicTools(pipeline),
    messages: [{ role: 'user', content: 'List the workspace, read notes/todo.md and src/app.ts, then write notes/summary.md summarising the TODOs.' }],
  });
}

const seen = (call: { name: string; args: unknown }, index: number) =>
  log(`→ #${index} ${call.name} arrived, its arguments complete: ${typeof call.args === 'string' ? call.args : JSON.stringify(call.args)}`);

/** Every event of the demo's turns, for the picture of the schedule. */
const allEvents: PipelineEvent[] = [];

/** One model response: its calls run as they arrive; prints the tool_result message for the next request. */
async function turn(source: AsyncIterable<RawMessageStreamEvent>): Promise<ToolResult[]> {
  let arrived = 0;
  const calls = fromAnthropicStream(source).pipe(tap((call) => seen(call, arrived++)));
  const events = await lastValueFrom(pipeline.events(calls).pipe(tap((event) => progress.event(event)), toArray()));
  progress.end();
  allEvents.push(...events);
  const results = events.flatMap((e) => (e.type === 'result' ? [e.result] : []));
  console.log('\nThe tool_result message for the next request:\n');
  console.log(JSON.stringify(toAnthropicToolResults(results), null, 2));
  for (const result of results) {
    if (result.name !== 'run_code' || result.status !== 'ok') continue;
    const { subCalls } = result.value as ProgramOutput;
    console.log(`\nThe program's ${subCalls.length} tool calls (${result.id}#1…#${subCalls.length}), each through the same pipeline (kept for the host, not sent):`);
    for (const sub of subCalls) {
      console.log(`  ${sub.id.padEnd(16)} ${sub.name.padEnd(10)} ${sub.status.padEnd(7)} ${JSON.stringify(sub.args)}`);
    }
  }
  return results;
}

try {
  const results: ToolResult[] = [];
  if (flags.has('--live')) {
    log('asking the Anthropic API…');
    results.push(...(await turn(live())));
  } else {
    log('replaying a streamed model response…');
    results.push(...(await turn(replay('anthropic-workspace.sse.txt'))));
    console.log('');
    log('replaying the next response: one run_code call…');
    results.push(...(await turn(replay('anthropic-run-code.sse.txt'))));
  }

  const counts = new Map<string, number>();
  for (const r of results) counts.set(r.status, (counts.get(r.status) ?? 0) + 1);
  const byStatus = [...counts].map(([status, n]) => `${n} ${status}`);
  const mean = (pick: (r: ToolResult) => number) => (results.reduce((sum, r) => sum + pick(r), 0) / results.length).toFixed(1);
  console.log(`\n${results.length} calls: ${byStatus.join(', ')}; wall time ${(performance.now() - t0).toFixed(0)} ms`);
  console.log(
    `mean per call: policy ${mean((r) => r.timing.durations.policy)} ms, queue ${mean((r) => r.timing.durations.queue)} ms, ` +
      `execute ${mean((r) => r.timing.durations.execute)} ms`,
  );

  // The picture of the schedule (renderTimeline): in the temp dir, because the workspace is deleted when
  // the demo ends and a file in the current directory would litter the user's checkout.
  const timelineFile = join(tmpdir(), 'toolstream-demo-timeline.svg');
  // From the events, which show the approval wait as its own span (results only give the policy stage's time).
  await writeFile(timelineFile, renderTimeline(allEvents, { tools: pipeline.tools, title: 'npm start: the schedule of the demo' }));
  console.log(`\nThe schedule as a picture (open it in a browser): ${timelineFile}`);
} finally {
  await runtime.close();
  await workspace.close();
}
