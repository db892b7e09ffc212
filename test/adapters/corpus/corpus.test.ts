import { tap } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, SourceError } from '../../../src/index.js';
import { expectedCalls, type ExpectedCall } from './expected.js';
import { readManifest, readResponses, type Recording } from './recordings.js';
import { adapt, collect, paced, parsed } from './replay.js';

// Every recording of the shared corpus of real provider streams (../shared/fixtures/streams/corpus),
// driven by its manifest: a new recording is tested without a code change. Each response is replayed
// through the SDK's own parser (or, for JSON-lines and JSON recordings, as the recorded objects) into
// the matching adapter and a real pipeline, one event per macrotask; what must come out is derived from
// the recording (see expected.ts), not from toolstream.

const manifest = readManifest();

describe('the corpus of real provider streams', () => {
  if ('missing' in manifest) {
    it.skip(`skipped: ${manifest.missing}`, () => undefined);
    return;
  }

  it('has recordings in all three wire formats', () => {
    expect(new Set(manifest.recordings.map((r) => r.format))).toEqual(new Set(['chat', 'responses', 'anthropic']));
  });

  for (const recording of manifest.recordings) {
    it(`${recording.name} (${recording.provider}, ${recording.format}/${recording.framing}): ${recording.quirk}`, async () => {
      for (const [n, response] of readResponses(recording).entries()) {
        const { events, ending } = await collect(parsed(recording.format, response));
        const expected = await expectedFor(recording, events, ending, response.sse);

        const source = paced(parsed(recording.format, response));
        const emitted: { id: string; name: string; at: number }[] = [];
        const calls = adapt(recording.format, source.events).pipe(tap((call) => emitted.push({ id: call.id, name: call.name, at: source.delivered() })));
        const { results, failed } = await createPipeline({ tools: recordedTools(expected) })
          .run(calls)
          .then(
            (results) => ({ results, failed: false }),
            (error: unknown) => {
              if (error instanceof SourceError) return { results: error.results, failed: true };
              throw error;
            },
          );

        const where = `response ${n + 1} of ${recording.file}`;
        // Ids and names, and the event at which each call came out: where it became complete.
        const at = (i: number, value: number) => (expected[i]?.at === undefined ? {} : { at: value });
        expect(
          emitted.map((call, i) => ({ id: call.id, name: call.name, ...at(i, call.at) })),
          where,
        ).toEqual(expected.map((call, i) => ({ id: call.id, name: call.name, ...at(i, call.at ?? -1) })));
        // Through the pipeline: each call's status and parsed arguments.
        const args = (i: number, value: unknown) => (expected[i]?.checkInput === false ? {} : { args: value });
        expect(
          results.map((result, i) => ({ id: result.id, outcome: result.status === 'ok' ? 'ok' : result.error.code, ...args(i, result.status === 'ok' ? result.args : undefined) })),
          where,
        ).toEqual(expected.map((call, i) => ({ id: call.id, outcome: call.outcome, ...args(i, call.input) })));
        // Only a recording that carries an error event fails (anything else would be a framing mistake here).
        const sourceError = recording.expect?.sourceError === true;
        expect({ parser: ending, run: failed ? 'rejected' : 'resolved' }, where).toEqual(
          sourceError ? { parser: 'error', run: 'rejected' } : { parser: 'clean', run: 'resolved' },
        );
      }
    });
  }
});

/** What must come out: where the manifest's `expect` gives the calls, those; else the recording's own reading. */
type Expected = Omit<ExpectedCall, 'at'> & { readonly at: number | undefined; readonly checkInput: boolean };

async function expectedFor(recording: Recording, events: readonly unknown[], ending: 'clean' | 'error', sse: string): Promise<Expected[]> {
  const manifestCalls = recording.expect?.calls;
  if (manifestCalls === undefined) return (await expectedCalls(recording.format, events, ending, sse)).map((call) => ({ ...call, checkInput: true }));
  // The manifest names the calls; it does not say at which event each is complete.
  return manifestCalls.map(({ id, name, arguments: input }) => ({ id, name, input, outcome: 'ok', at: undefined, checkInput: input !== undefined }));
}

/** A tool for every name the recording calls, taking any arguments. */
function recordedTools(expected: readonly Expected[]) {
  return [...new Set(expected.map((call) => call.name))].map((name) =>
    defineTool({ name, description: 'a tool of the recording', input: z.unknown(), mode: 'parallel', execute: () => 'done' }),
  );
}
