import { equalInConstantTime, hmacSigner, randomBase64Url, utf8 } from '../../util/digest.js';
import { canonicalJson } from '../../durable/canonical.js';
import { durabilityOf } from '../../durable/durability.js';
import type { DurableSettings } from '../../durable/settings.js';
import { ConfigError } from '../../util/errors.js';
import type { JsonValue } from '../../types/json.js';
import type { Continuation, ContinuationOptions, LoopProvider } from './outcome.js';
import type { Pipeline } from '../../types/pipeline.js';
import { ContinuationError } from './errors.js';

const PURPOSE = 'toolstream.continuation.v1';
const MAX_CHARS = 4_000_000;

/** The pipeline's durability, for a continuation: a `ConfigError`-like refusal without a journal. */
function durableOf(pipeline: Pipeline, where: string): DurableSettings {
  const durable = durabilityOf(pipeline);
  if (durable === undefined) {
    throw new ContinuationError('continuation_wrong_pipeline', `${where}: the pipeline has no journal, so it holds no durable turn to continue (createPipeline({ journal, approvalSecret })).`);
  }
  return durable;
}

/** The bytes of a `secret` option: -1 for anything but a string or a Uint8Array. */
function secretBytes(secret: unknown): number {
  return typeof secret === 'string' ? utf8(secret).byteLength : secret instanceof Uint8Array ? secret.byteLength : -1;
}

/**
 * Checks a `secret` option ({@link ContinuationOptions}) in the public function that took it, before
 * anything runs: found only when a continuation is signed, a short secret would fail a turn that
 * suspends after its calls ran. The message gives the secret's length, never the secret.
 *
 * @throws {ConfigError} (`where`, option `secret`) for anything but `undefined` or a string or
 *   Uint8Array of at least 32 bytes.
 *
 * @example
 * ```ts
 * checkSecret('runAnthropicTurn', options?.secret);
 * ```
 */
export function checkSecret(where: ConfigError['where'], secret: unknown): void {
  if (secret === undefined) return;
  const bytes = secretBytes(secret);
  if (bytes >= 32) return;
  throw new ConfigError(
    where,
    'secret',
    "a string or Uint8Array of at least 32 bytes (it signs continuations; keep it secret, the same in every process that continues the loop), or left out to sign with the pipeline's approvalSecret",
    bytes < 0 ? secret : `(${bytes} bytes)`,
  );
}

function signer(durable: DurableSettings, options: ContinuationOptions | undefined): (text: string) => string {
  const { secret } = options ?? {};
  if (secret === undefined) return (text) => durable.tokens.sign(PURPOSE, text);
  // Every public function that takes `secret` refused a short one already (checkSecret, naming itself):
  // this is the last guard, so that no continuation is ever signed with a weak key.
  if (secretBytes(secret) < 32) throw new Error('toolstream: a continuation secret under 32 bytes reached the signer unchecked (checkSecret)');
  const sign = hmacSigner(typeof secret === 'string' ? utf8(secret) : Uint8Array.from(secret));
  return (text) => sign(`${PURPOSE}\n${text}`);
}

/**
 * Makes a signed continuation for a turn of `pipeline`, with a fresh nonce, expiring after the
 * pipeline's `approvalTtlMs`. The provider loops call it; a loop of your own (as `toolstream/ai-sdk`'s)
 * calls it with its own `state`.
 *
 * @throws {ContinuationError} `continuation_wrong_pipeline` when the pipeline has no journal.
 *
 * @example
 * ```ts
 * const continuation = issueContinuation(pipeline, { provider: 'anthropic', turn: 'conv-1/1', step: 1, state: { message } });
 * ```
 */
export function issueContinuation(
  pipeline: Pipeline,
  claims: { readonly provider: LoopProvider; readonly turn: string; readonly step: number; readonly state: JsonValue },
  options?: ContinuationOptions,
): Continuation {
  const durable = durableOf(pipeline, 'issueContinuation');
  const unsigned = {
    v: 1 as const,
    provider: claims.provider,
    turn: claims.turn,
    step: claims.step,
    state: claims.state,
    nonce: randomBase64Url(16),
    expiresAt: Date.now() + durable.approvalTtlMs,
  };
  return { ...unsigned, sig: signer(durable, options)(canonicalJson(unsigned)) };
}

/**
 * Checks a continuation as received (parsed JSON, from a browser or a queue): its shape, its
 * signature, its provider and its expiry. Consumes nothing (see `claimContinuation`).
 *
 * @throws {ContinuationError} `continuation_malformed`, `continuation_forged`,
 *   `continuation_wrong_provider`, `continuation_expired`, `continuation_wrong_pipeline` (no journal).
 *
 * @example
 * ```ts
 * const continuation = verifyContinuation(pipeline, JSON.parse(body).continuation, 'anthropic');
 * ```
 */
export function verifyContinuation(pipeline: Pipeline, value: unknown, provider: LoopProvider, options?: ContinuationOptions): Continuation {
  const durable = durableOf(pipeline, 'verifyContinuation');
  const malformed = (why: string) => new ContinuationError('continuation_malformed', `Not a continuation: ${why}.`);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw malformed('expected an object');
  const { v, provider: made, turn, step, state, nonce, expiresAt, sig } = value as Record<string, unknown>;
  if (v !== 1) throw malformed(`version ${JSON.stringify(v)}, this toolstream reads version 1`);
  if (typeof made !== 'string' || typeof turn !== 'string' || turn === '' || typeof nonce !== 'string' || typeof sig !== 'string') {
    throw malformed('`provider`, `turn`, `nonce` and `sig` must be strings');
  }
  if (typeof step !== 'number' || !Number.isSafeInteger(step) || step < 1) throw malformed('`step` must be a positive integer');
  if (typeof expiresAt !== 'number' || !Number.isFinite(expiresAt)) throw malformed('`expiresAt` must be a number');
  if (state === undefined) throw malformed('`state` is missing');
  const unsigned = { v, provider: made, turn, step, state, nonce, expiresAt };
  let text: string;
  try {
    text = canonicalJson(unsigned);
  } catch {
    throw malformed('it has no JSON form');
  }
  if (text.length > MAX_CHARS) throw malformed(`over ${MAX_CHARS} characters`);
  if (!equalInConstantTime(sig, signer(durable, options)(text))) {
    throw new ContinuationError('continuation_forged', 'The continuation was altered, or signed with another secret: it is refused.');
  }
  if (made !== provider) {
    throw new ContinuationError('continuation_wrong_provider', `This continuation was made by the ${made} loop; continue it with that loop, not the ${provider} one.`);
  }
  if (expiresAt <= Date.now()) {
    throw new ContinuationError('continuation_expired', `This continuation expired at ${new Date(expiresAt).toISOString()}.`);
  }
  return { ...(unsigned as Omit<Continuation, 'sig'>), sig };
}
