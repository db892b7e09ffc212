import { hmac } from '@noble/hashes/hmac';
import { sha256 } from '@noble/hashes/sha2';

/**
 * The hashing, signing and encoding the library needs, on web-standard APIs and `@noble/hashes` only,
 * so the core loads in a browser, a Worker, Deno and Bun as it does on Node. What it makes is
 * byte-identical to what `node:crypto` made before (`createHash('sha256')`, `createHmac('sha256', …)`,
 * `digest('base64url')`, `randomBytes(16).toString('base64url')`): idempotency keys, argument hashes,
 * approval tokens and continuations made by one runtime or version are valid in another.
 * `test/internal/digest.test.ts` pins the identity against `node:crypto`.
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder(); // not fatal: bytes that are not UTF-8 become U+FFFD, as Buffer's toString did

/** `text` as UTF-8 (a lone surrogate becomes U+FFFD, as with `Buffer.from`). */
export const utf8 = (text: string): Uint8Array => encoder.encode(text);

/** SHA-256 of `text` (UTF-8), base64url without padding. */
export function sha256Base64Url(text: string): string {
  return toBase64Url(sha256(utf8(text)));
}

/**
 * HMAC-SHA256 under `key` of each text given (UTF-8), base64url without padding. For a key that signs
 * many texts (an approval secret): the key's setup (its inner and outer pads hashed) is done once here,
 * and each text costs only its own blocks.
 */
export function hmacSigner(key: Uint8Array): (text: string) => string {
  const keyed = hmac.create(sha256, key); // copies what it needs of the key: later changes to `key` don't reach it
  return (text) => toBase64Url(keyed.clone().update(utf8(text)).digest());
}

/**
 * Whether two strings are equal, in a time that depends only on their lengths (a MAC compared this way
 * does not tell an attacker how much of a guess was right).
 */
export function equalInConstantTime(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}

/** `bytes` random bytes from the platform's CSPRNG, base64url. */
export function randomBase64Url(bytes: number): string {
  return toBase64Url(globalThis.crypto.getRandomValues(new Uint8Array(bytes)));
}

/** A random UUID (v4) from the platform's CSPRNG. */
export const randomId = (): string => globalThis.crypto.randomUUID();

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const VALUES = new Map([...ALPHABET].map((char, value) => [char, value]));

/** `bytes` as base64url without padding (RFC 4648 §5), as Node's `'base64url'` encoding writes it. */
export function toBase64Url(bytes: Uint8Array): string {
  let out = '';
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out += ALPHABET[n >> 18]! + ALPHABET[(n >> 12) & 63]! + ALPHABET[(n >> 6) & 63]! + ALPHABET[n & 63]!;
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = bytes[i]! << 16;
    out += ALPHABET[n >> 18]! + ALPHABET[(n >> 12) & 63]!;
  } else if (rest === 2) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8);
    out += ALPHABET[n >> 18]! + ALPHABET[(n >> 12) & 63]! + ALPHABET[(n >> 6) & 63]!;
  }
  return out;
}

/**
 * The UTF-8 text that base64url `text` encodes, or `undefined` when `text` is not base64url (a
 * character outside the alphabet, or a length no encoding has). Stricter than `Buffer.from(…,
 * 'base64url')`, which skipped what it could not read: it is only given text whose MAC held.
 */
export function fromBase64UrlText(text: string): string | undefined {
  if (text.length % 4 === 1) return undefined;
  const bytes = new Uint8Array(Math.floor((text.length * 3) / 4));
  let bits = 0;
  let buffered = 0;
  let at = 0;
  for (const char of text) {
    const value = VALUES.get(char);
    if (value === undefined) return undefined;
    buffered = ((buffered << 6) | value) & 0x3fff; // fewer than 8 bits wait, plus the 6 just read
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      bytes[at++] = (buffered >> bits) & 255;
    }
  }
  return decoder.decode(bytes.subarray(0, at));
}
