import { createHmac, timingSafeEqual } from 'node:crypto';
import { PAYLOAD_VERSION } from './jobPayload.js';
import { WORKER_FAILURE_CODES, type WorkerFailureCode } from './remoteToolError.js';

/** The call a job's outcome is signed for, as the agent dispatched it and the worker received it. */
export interface SignedCall {
  readonly jobId: string;
  readonly callId: string;
  /** `argsHash` of the call's arguments (canonical JSON): the same on both sides whatever the key order. */
  readonly argsHash: string;
}

/** What a completed job returns: the body's value (`v`) or how many items it streamed (`s`), signed. */
export type JobReturn = UnsignedReturn & {
  /** base64url HMAC-SHA256 of the outcome for its call ({@link OutcomeSigner}). */
  readonly sig: string;
};

export type UnsignedReturn = ({ readonly k: 'v'; readonly value: unknown } | { readonly k: 's'; readonly n: number }) & {
  /** How many progress reports the body sent (absent: none), so the agent reads them only when there are some. */
  readonly p?: number;
};

/** What an entry of a job's Redis stream is: a streamed item, or a progress report. */
export type EntryKind = 'item' | 'progress';

/** A base64url HMAC-SHA256: 43 characters. */
const SIGNED_REASON = /^\[([a-z_]+)\] ([\s\S]*)\n\nsig ([A-Za-z0-9_-]{43})$/;

/**
 * The MACs of what a worker sends back for one job, with the fleet's secret: the worker signs, the
 * agent verifies before it uses anything. Each signed text is `JSON.stringify` of a domain tag, the
 * payload version and its parts, so a MAC of one kind (a result, a failure, an item, a progress report,
 * a job payload) never checks as another's:
 * - a result: the job id, the call id, the arguments hash, the value (or the streamed item count) and
 *   the progress count. Another job's genuine result, copied over, names another job and call; a value
 *   written by hand has no MAC the agent can check. JSON text is stable under BullMQ's round trip (see
 *   `jobPayload.ts`), so signing `JSON.stringify` of the value works on both sides;
 * - a failure: the same call, and the `[code] text` the worker writes (sent as `[code] text\n\nsig MAC`);
 * - a stream entry (item or progress): the job id, its sequence number from 0, and its JSON text as
 *   stored, so a forged, reordered, duplicated or replayed entry does not check.
 */
export class OutcomeSigner {
  constructor(
    private readonly secret: Buffer,
    private readonly call: SignedCall,
  ) {}

  get jobId(): string {
    return this.call.jobId;
  }

  /** The job's return value for `outcome` (the worker's side). @throws {TypeError} for a value without a JSON form. */
  returned(outcome: UnsignedReturn): JobReturn {
    return { ...outcome, sig: this.#returnMac(outcome) };
  }

  /** Whether `result` (a completed job's parsed return value) is a result signed for this call. */
  verifies(result: unknown): result is JobReturn {
    if (typeof result !== 'object' || result === null) return false;
    const { k, n, p, sig } = result as Record<string, unknown>;
    if ((k !== 'v' && (k !== 's' || typeof n !== 'number')) || (p !== undefined && typeof p !== 'number') || typeof sig !== 'string') return false;
    return this.#equal(sig, this.#returnMac(result as UnsignedReturn));
  }

  /** A failed job's reason for `code` and `text` (the worker's side). */
  failure(code: WorkerFailureCode, text: string): string {
    return `[${code}] ${text}\n\nsig ${this.#mac(['toolstream.failure', code, text])}`;
  }

  /** The code and text of a failure reason signed for this call; `undefined` for any other reason. */
  readFailure(reason: string): { readonly code: WorkerFailureCode; readonly text: string } | undefined {
    const match = SIGNED_REASON.exec(reason);
    if (match === null || !WORKER_FAILURE_CODES.has(match[1]!)) return undefined;
    const [, code, text, sig] = match as unknown as [string, WorkerFailureCode, string, string];
    return this.#equal(sig, this.#mac(['toolstream.failure', code, text])) ? { code, text } : undefined;
  }

  /** The MAC of entry `seq` of the job's item or progress stream, whose JSON text is `text`. */
  entry(kind: EntryKind, seq: number, text: string): string {
    // The prefix is JSON (no raw newline in it), so the text after the newline is the entry's own.
    return createHmac('sha256', this.secret).update(`${JSON.stringify([`toolstream.${kind}`, PAYLOAD_VERSION, this.call.jobId, seq])}\n${text}`).digest('base64url');
  }

  /** Whether `mac` is the MAC of entry `seq` with `text`. */
  verifiesEntry(kind: EntryKind, seq: number, text: string, mac: unknown): boolean {
    return typeof mac === 'string' && this.#equal(mac, this.entry(kind, seq, text));
  }

  #returnMac(outcome: UnsignedReturn): string {
    return this.#mac(['toolstream.result', outcome.k, outcome.k === 'v' ? outcome.value : outcome.n, outcome.p ?? 0]);
  }

  #mac([domain, ...parts]: readonly unknown[]): string {
    const { jobId, callId, argsHash } = this.call;
    return createHmac('sha256', this.secret).update(JSON.stringify([domain, PAYLOAD_VERSION, jobId, callId, argsHash, ...parts])).digest('base64url');
  }

  #equal(given: string, expected: string): boolean {
    const a = Buffer.from(given);
    const b = Buffer.from(expected);
    return a.length === b.length && timingSafeEqual(a, b);
  }
}
