import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { streamedResponse, toSSE, type WireFormat } from '../../../src/testing/index.js';

/**
 * The shared corpus of real provider streams (`../shared/fixtures/streams/corpus`, beside the
 * repository, as in CI). It is read in place, never copied: see its README.md.
 */
export const CORPUS_DIR = fileURLToPath(new URL('../../../../shared/fixtures/streams/corpus/', import.meta.url));

export type { WireFormat };
export type Framing = 'sse' | 'jsonl' | 'json';

/** Where a plain reading of the wire is not the answer (see the corpus README). */
export interface ManifestExpect {
  /** The client calls, when the only calls on the wire are the server's own. */
  readonly calls?: readonly { readonly id: string; readonly name: string; readonly arguments?: unknown }[];
  /** The stream carries an error event: the source fails. */
  readonly sourceError?: boolean;
}

/** One entry of `manifest.json`. */
export interface Recording {
  readonly name: string;
  readonly file: string;
  readonly format: WireFormat;
  readonly framing: Framing;
  readonly provider: string;
  readonly quirk: string;
  readonly expect: ManifestExpect | null;
}

/** The manifest, or why it cannot be read (the test then says it was skipped and why). */
export function readManifest(): { readonly recordings: readonly Recording[] } | { readonly missing: string } {
  const manifest = `${CORPUS_DIR}manifest.json`;
  if (!existsSync(manifest)) {
    return { missing: `no corpus at ${CORPUS_DIR} (CI checks ../shared out beside the repository)` };
  }
  return { recordings: JSON.parse(readFileSync(manifest, 'utf8')) as Recording[] };
}

/**
 * One HTTP response of a recording, ready to replay: `sse` is the body as SSE text (the recorded bytes
 * for an SSE recording; for JSON-lines and JSON recordings, the parsed objects serialised the way the
 * provider sends them, for the SDK's helper streams), and `objects` the parsed items of a JSON-lines or
 * JSON recording (`undefined` for SSE: those go through the SDK's parser).
 */
export interface RecordedResponse {
  readonly sse: string;
  readonly objects: readonly unknown[] | undefined;
}

/** A recording as its responses, each to be replayed as its own stream. */
export function readResponses(recording: Recording): RecordedResponse[] {
  const text = readFileSync(`${CORPUS_DIR}${recording.file}`, 'utf8');
  if (recording.framing === 'sse') {
    const blocks = sseBlocks(text);
    return splitResponses(recording.format, blocks.map(blockData)).map((range) => ({
      sse: blocks.slice(range.start, range.end).join('\n\n') + '\n\n',
      objects: undefined,
    }));
  }
  const objects: unknown[] =
    recording.framing === 'json'
      ? (JSON.parse(text) as unknown[])
      : text
          .split('\n')
          .filter((line) => line.trim() !== '')
          .map((line) => JSON.parse(line) as unknown);
  return splitResponses(recording.format, objects).map((range) => {
    const items = objects.slice(range.start, range.end);
    return { sse: toSSE(recording.format, items), objects: items };
  });
}

/**
 * The SSE events of a recording as raw text blocks. 12 recordings have no blank line between events:
 * in a file without any blank line, a `data:` or `event:` line that follows a `data:` line starts a new
 * event (the corpus README), so a blank line is put back there and nothing else is changed.
 */
function sseBlocks(text: string): string[] {
  const normalized = text.replace(/\r\n?/g, '\n');
  // (Trailing blank lines do not count: some of those files end with one.)
  const separated = /\n\n+[^\n]/.test(normalized);
  const framed = separated ? normalized : normalized.replace(/^(data:.*)\n(?=data:|event:)/gm, '$1\n\n');
  return framed.split(/\n{2,}/).filter((block) => block.trim() !== '');
}

/** The JSON a raw SSE block carries (`undefined` for comments, `[DONE]` and the like). */
function blockData(block: string): unknown {
  const data = block
    .split('\n')
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice('data:'.length).replace(/^ /, ''))
    .join('\n');
  try {
    return JSON.parse(data) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * Where each response of a recording starts and ends. Anthropic and Responses streams say it: a
 * response starts at `message_start` / `response.created`. Chat Completions streams do not; there a
 * response starts at a chunk with a new non-empty `id` once the previous response has sent its
 * `finish_reason` (a gateway may change the id within one response before that), taking with it the
 * `id: ""` chunks just before it (Azure opens each response with one).
 */
function splitResponses(format: WireFormat, items: readonly unknown[]): { start: number; end: number }[] {
  const starts: number[] = [0];
  let finished = false;
  let lastId: string | undefined;
  items.forEach((item, index) => {
    if (index === 0 || !isRecord(item)) return;
    if (format !== 'chat') {
      if (item['type'] === (format === 'anthropic' ? 'message_start' : 'response.created')) starts.push(index);
      return;
    }
    const id = typeof item['id'] === 'string' && item['id'] !== '' ? item['id'] : undefined;
    if (id !== undefined && lastId !== undefined && id !== lastId && finished) {
      let start = index;
      while (start - 1 > (starts.at(-1) ?? 0) && isRecord(items[start - 1]) && (items[start - 1] as Record<string, unknown>)['id'] === '') start--;
      starts.push(start);
      finished = false;
    }
    if (id !== undefined) lastId = id;
    const choices = item['choices'];
    if (Array.isArray(choices) && choices.some((c) => isRecord(c) && typeof c['finish_reason'] === 'string' && c['finish_reason'] !== '')) {
      finished = true;
    }
  });
  return starts.map((start, i) => ({ start, end: starts[i + 1] ?? items.length }));
}

/** A `fetch` that answers every request with the recorded body, for the SDK clients' helper streams. */
export const replayingFetch =
  (sse: string) =>
  async (): Promise<Response> =>
    streamedResponse(sse);

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
