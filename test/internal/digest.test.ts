/**
 * The core hashes and signs on `@noble/hashes` and web-standard APIs (issue 28), and must make exactly
 * what `node:crypto` made before: an idempotency key, an argument hash or an approval token made by one
 * runtime or version is valid in another. Each function is checked against `node:crypto` and `Buffer`
 * on arbitrary input (lone surrogates too), and a few values made by 0.1 are pinned as they were.
 */
import { createHash, createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ApprovalTokens } from '../../src/durable/approvalTokens.js';
import { argsHash } from '../../src/durable/canonical.js';
import { equalInConstantTime, fromBase64UrlText, hmacSigner, randomBase64Url, randomId, sha256Base64Url, toBase64Url, utf8 } from '../../src/util/digest.js';

const text = fc.oneof(fc.string({ unit: 'binary', maxLength: 300 }), fc.string({ unit: 'grapheme', maxLength: 300 }), fc.string({ maxLength: 2000 }));
const bytes = fc.uint8Array({ maxLength: 300 });

describe('digest: byte-identical to node:crypto', () => {
  it('SHA-256 and HMAC-SHA256 of any text, base64url', () => {
    fc.assert(
      fc.property(text, bytes, (input, key) => {
        expect(sha256Base64Url(input)).toBe(createHash('sha256').update(input).digest('base64url'));
        expect(hmacSigner(key)(input)).toBe(createHmac('sha256', key).update(input).digest('base64url'));
        expect(hmacSigner(utf8(input))('x')).toBe(createHmac('sha256', Buffer.from(input)).update('x').digest('base64url'));
      }),
      { numRuns: 300 },
    );
  });

  it('hmacSigner: one key set up once signs any number of texts as createHmac does, and a later change to the key does not reach it', () => {
    fc.assert(
      fc.property(bytes, fc.array(text, { minLength: 1, maxLength: 5 }), (key, inputs) => {
        const original = Uint8Array.from(key);
        const sign = hmacSigner(key);
        key.fill(7);
        for (const input of [...inputs, ...inputs]) expect(sign(input)).toBe(createHmac('sha256', original).update(input).digest('base64url'));
      }),
      { numRuns: 200 },
    );
  });

  it("base64url both ways, as Buffer's 'base64url' encoding", () => {
    fc.assert(
      fc.property(bytes, text, (data, input) => {
        expect(toBase64Url(data)).toBe(Buffer.from(data).toString('base64url'));
        expect(fromBase64UrlText(toBase64Url(utf8(input)))).toBe(Buffer.from(Buffer.from(input).toString('base64url'), 'base64url').toString('utf8'));
      }),
      { numRuns: 300 },
    );
    expect(fromBase64UrlText('a+b/')).toBeUndefined(); // base64, not base64url
    expect(fromBase64UrlText('abcde')).toBeUndefined(); // no encoding has this length
    expect(fromBase64UrlText('')).toBe('');
  });

  it('compares in constant time what it compares: equal strings only', () => {
    fc.assert(fc.property(fc.string(), fc.string(), (a, b) => {
        expect(equalInConstantTime(a, b)).toBe(a === b);
        expect(equalInConstantTime(a, a)).toBe(true);
      }));
    expect(equalInConstantTime('abc', 'abc')).toBe(true);
    expect(equalInConstantTime('abc', 'abd')).toBe(false);
  });

  it('random: 16 bytes are 22 base64url characters; ids are v4 UUIDs, each new', () => {
    expect(randomBase64Url(16)).toMatch(/^[\w-]{22}$/);
    expect(randomId()).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(Array.from({ length: 100 }, randomId)).size).toBe(100);
  });
});

describe('values made by 0.1 (on node:crypto) are made the same', () => {
  it('an argument hash', () => {
    expect(argsHash({ b: [1, 'é', { c: null }], a: 'x' })).toBe('ltM3HOjeZ6mtj8ddMz7d4U_trvYKPdJqM25l5TxHaKE');
  });

  it("an idempotency key's hash", () => {
    expect(sha256Base64Url(JSON.stringify(['turn', 'conv-1/1', 'toolu_01']))).toBe('fZ1XNpB_8Ynr_0gqlmuscQuxMnUvzvcj8lYe4sXAn9Q');
  });

  it('an approval token signed by node:crypto is accepted, and one it would refuse is refused', () => {
    const secret = 's'.repeat(32);
    const claims = { turn: 't', callId: 'c1', argsHash: 'h', nonce: 'n', expiresAt: 1 };
    const body = Buffer.from(JSON.stringify(claims)).toString('base64url');
    const token = `${body}.${createHmac('sha256', Buffer.from(secret)).update(body).digest('base64url')}`;
    expect(new ApprovalTokens(secret).check(token)).toEqual(claims);
    expect(new ApprovalTokens(new TextEncoder().encode(secret)).check(token)).toEqual(claims);
    expect(new ApprovalTokens('t'.repeat(32)).check(token)).toBe('forged');
    // And the other way: what it issues, node:crypto verifies.
    const issued = new ApprovalTokens(secret).issue({ turn: 't', callId: 'c1', argsHash: 'h', expiresAt: 1 }).token;
    const [issuedBody, mac] = issued.split('.');
    expect(mac).toBe(createHmac('sha256', Buffer.from(secret)).update(issuedBody!).digest('base64url'));
    expect(JSON.parse(Buffer.from(issuedBody!, 'base64url').toString('utf8'))).toMatchObject({ turn: 't', callId: 'c1' });
  });
});
