import { describeValue } from '../util/describe.js';
import { snapshotValue } from '../util/snapshot.js';
import type { JournaledResult } from '../types/journal.js';
import type { ToolError } from '../types/toolError.js';
import type { ToolResult } from '../types/toolResult.js';

/** A value as JSON data for the journal; one without a JSON form (a transform's BigInt) is noted as such. */
export function asData(value: unknown): unknown {
  try {
    return snapshotValue(value);
  } catch {
    return { unserializable: describeValue(value) };
  }
}

/** A finished result as the journal keeps it: what the model saw, serialisable. */
export function journaledResult(result: ToolResult): JournaledResult {
  const status = result.status as JournaledResult['status'];
  const base = { status, content: result.content, started: result.started };
  if (result.status === 'ok') {
    const ok = result.streamed ? { ...base, streamed: true } : base;
    try {
      return JSON.stringify(result.value) === undefined ? { ...ok, valueOmitted: result.value !== undefined } : { ...ok, value: result.value };
    } catch {
      return { ...ok, valueOmitted: true };
    }
  }
  return { ...base, error: errorOf(result.error) };
}

/** An error's JSON form without its `cause` (what a body threw is not data). */
function errorOf(error: ToolError): { readonly code: ToolError['code']; readonly message: string } {
  const { cause: _cause, ...rest } = error as ToolError & { cause?: unknown };
  try {
    return JSON.parse(JSON.stringify(rest)) as { code: ToolError['code']; message: string };
  } catch {
    return { code: error.code, message: error.message };
  }
}
