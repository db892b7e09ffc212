import { sha256Base64Url } from '../util/digest.js';

/**
 * JSON with object keys sorted at every level: the same data gives the same text, whatever order its
 * keys were built in. What an approval token's argument hash is computed over.
 *
 * @throws {TypeError} for a value without a JSON form.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value)) ?? 'null';
}

/** SHA-256 of the canonical JSON, base64url: the fingerprint of a call's admitted arguments. */
export function argsHash(value: unknown): string {
  return sha256Base64Url(canonicalJson(value));
}

function sortKeys(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const json: unknown = typeof (value as { toJSON?: unknown }).toJSON === 'function' ? (value as { toJSON(): unknown }).toJSON() : value;
  if (typeof json !== 'object' || json === null) return json;
  if (Array.isArray(json)) return json.map(sortKeys);
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(json).sort()) {
    Object.defineProperty(sorted, key, { value: sortKeys((json as Record<string, unknown>)[key]), enumerable: true, writable: true, configurable: true });
  }
  return sorted;
}
