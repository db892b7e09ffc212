import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** What an approval token says, signed. */
export interface TokenClaims {
  readonly turn: string;
  readonly callId: string;
  /** `argsHash` of the admitted arguments the approval is for. */
  readonly argsHash: string;
  /** Unique per pending approval: consumed once, in the store. */
  readonly nonce: string;
  /** Epoch milliseconds. */
  readonly expiresAt: number;
}

/** Why a token is refused. */
export type TokenProblem = 'malformed' | 'forged';

/**
 * Signs and checks approval tokens: `base64url(claims JSON) "." base64url(HMAC-SHA256(secret, that))`.
 * The secret never leaves the process; a token alone cannot be altered (any change breaks the MAC)
 * nor made for another turn, call or argument set.
 */
export class ApprovalTokens {
  readonly #secret: Buffer;

  constructor(secret: string | Uint8Array) {
    this.#secret = Buffer.from(secret);
  }

  issue(claims: Omit<TokenClaims, 'nonce'>): { readonly token: string; readonly claims: TokenClaims } {
    const full: TokenClaims = { ...claims, nonce: randomBytes(16).toString('base64url') };
    const body = Buffer.from(JSON.stringify(full)).toString('base64url');
    return { token: `${body}.${this.#mac(body)}`, claims: full };
  }

  /** The token's claims if its signature holds; else why not. Says nothing yet of expiry or use. */
  check(token: unknown): TokenClaims | TokenProblem {
    if (typeof token !== 'string' || token.length > 4096) return 'malformed';
    const [body, mac, extra] = token.split('.');
    if (body === undefined || mac === undefined || extra !== undefined) return 'malformed';
    const expected = Buffer.from(this.#mac(body));
    const given = Buffer.from(mac);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'forged';
    try {
      const claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Partial<TokenClaims>;
      const { turn, callId, argsHash, nonce, expiresAt } = claims;
      if (typeof turn !== 'string' || typeof callId !== 'string' || typeof argsHash !== 'string' || typeof nonce !== 'string' || typeof expiresAt !== 'number') {
        return 'malformed';
      }
      return { turn, callId, argsHash, nonce, expiresAt };
    } catch {
      return 'malformed';
    }
  }

  /**
   * An HMAC-SHA256 of `text` under the same secret, for another use than approval tokens (a loop's
   * continuation): `purpose` is signed with the text, so a MAC made for one use is never valid for another.
   */
  sign(purpose: string, text: string): string {
    return createHmac('sha256', this.#secret).update(`${purpose}\n${text}`).digest('base64url');
  }

  #mac(body: string): string {
    return createHmac('sha256', this.#secret).update(body).digest('base64url');
  }
}
