import fc from 'fast-check';
import { tap, type Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { createPipeline, SourceError, type ToolCall, type ToolResult } from '../../src/index.js';
import { checkInvariants, scriptedStream, toolCalls, type StreamMode } from '../../src/testing/index.js';
import { readManifest, readResponses } from '../adapters/corpus/recordings.js';
import { collect, parsed } from '../adapters/corpus/replay.js';
import { streamFeatures } from './streamFeatures.js';
import { adapt, args, STREAMS, tools } from './support.js';

// The stream arbitraries of toolstream/testing against the shared corpus of 79 real recordings
// (../shared/fixtures/streams/corpus, read in place): every event type and chunk feature a recording
// shows is produced by the arbitrary of its format, and a generated stream — through toSSE, the
// official SDK's SSE parser and the adapter — gives exactly the calls it was generated with.

const NUM_RUNS = Math.max(20, Math.round(Number(process.env.PROPERTY_RUNS ?? 1000) / 10));

/** A run of the calls an adapter emits; `results` as `run()` resolved, or as its `SourceError` holds them. */
async function run(calls: Observable<ToolCall>): Promise<{ received: ToolCall[]; results: readonly ToolResult[]; sourceError: boolean }> {
  const received: ToolCall[] = [];
  const pipeline = createPipeline({ tools, onError: 'continue', concurrency: 2 });
  try {
    return { received, results: await pipeline.run(calls.pipe(tap((call) => received.push(call)))), sourceError: false };
  } catch (error) {
    if (error instanceof SourceError) return { received, results: error.results, sourceError: true };
    throw error; // a raw stream error: what must never happen
  }
}

const manifest = readManifest();

describe('the stream arbitraries cover the corpus of real provider streams', () => {
  if ('missing' in manifest) {
    it.skip(`skipped: ${manifest.missing}`, () => undefined);
    return;
  }

  for (const format of ['anthropic', 'chat', 'responses'] as const) {
    it(`${format}: every event type and chunk feature of the recordings is generated`, async () => {
      const recorded = new Map<string, string>();
      for (const recording of manifest.recordings.filter((r) => r.format === format)) {
        for (const response of readResponses(recording)) {
          const { events } = await collect(parsed(format, response));
          for (const feature of streamFeatures(format, events)) if (!recorded.has(feature)) recorded.set(feature, recording.name);
        }
      }
      expect(recorded.size).toBeGreaterThan(10);

      const generated = new Set<string>();
      const calls = toolCalls({ tools: args, hostile: true });
      for (const mode of ['valid', 'fragmented'] as const) {
        for (const stream of fc.sample(STREAMS[format]({ calls, mode }), { numRuns: 300, seed: 26 })) {
          for (const feature of streamFeatures(format, stream.events)) generated.add(feature);
        }
      }
      // Each missing feature with the recording that shows it.
      expect([...recorded].filter(([feature]) => !generated.has(feature))).toEqual([]);
    }, 120_000);
  }
});

describe('generated streams through the SDK parser and the adapter', () => {
  for (const format of ['anthropic', 'chat', 'responses'] as const) {
    for (const mode of ['valid', 'fragmented'] as const satisfies readonly StreamMode[]) {
      it(`${format}, ${mode}: exactly the generated calls, each answered`, async () => {
        await fc.assert(
          fc.asyncProperty(STREAMS[format]({ calls: toolCalls({ tools: args, hostile: true }), mode }), async (stream) => {
            const { received, results, sourceError } = await run(adapt(format, scriptedStream(format, stream.events)));
            expect(sourceError).toBe(false);
            expect(received).toEqual(stream.calls);
            expect(checkInvariants({ calls: received, results, tools, concurrency: 2 })).toEqual({ ok: true });
          }),
          { numRuns: NUM_RUNS },
        );
      }, 120_000);
    }

    it(`${format}, hostile: one result per call received, and a SourceError if anything, never a raw stream error`, async () => {
      const seen = { sourceErrors: 0, incomplete: 0, clean: 0 };
      await fc.assert(
        fc.asyncProperty(STREAMS[format]({ calls: toolCalls({ tools: args, hostile: true }), mode: 'hostile' }), async (stream) => {
          const { received, results, sourceError } = await run(adapt(format, scriptedStream(format, stream.events)));
          expect(checkInvariants({ calls: received, results, tools, concurrency: 2 })).toEqual({ ok: true });
          for (const result of results) expect(typeof result.content).toBe('string');
          if (sourceError) seen.sourceErrors++;
          else seen.clean++;
          if (results.some((result) => result.error?.code === 'incomplete_args')) seen.incomplete++;
        }),
        { numRuns: NUM_RUNS },
      );
      // The damage is real: some runs fail at the source, some calls are cut off, some runs end cleanly.
      expect(seen.sourceErrors).toBeGreaterThan(0);
      expect(seen.incomplete).toBeGreaterThan(0);
      expect(seen.clean).toBeGreaterThan(0);
    }, 120_000);
  }
});
