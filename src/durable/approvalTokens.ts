import { equalInConstantTime, fromBase64UrlText, hmacSigner, randomBase64Url, toBase64Url, utf8 } from '../util/digest.js';

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
  /** HMAC-SHA256 under the secret, keyed once. */
  readonly #hmac: (text: string) => string;

  constructor(secret: string | Uint8Array) {
    this.#hmac = hmacSigner(typeof secret === 'string' ? utf8(secret) : Uint8Array.from(secret));
  }

  issue(claims: Omit<TokenClaims, 'nonce'>): { readonly token: string; readonly claims: TokenClaims } {
    const full: TokenClaims = { ...claims, nonce: randomBase64Url(16) };
    const body = toBase64Url(utf8(JSON.stringify(full)));
    return { token: `${body}.${this.#mac(body)}`, claims: full };
  }

  /** The token's claims if its signature holds; else why not. Says nothing yet of expiry or use. */
  check(token: unknown): TokenClaims | TokenProblem {
    if (typeof token !== 'string' || token.length > 4096) return 'malformed';
    const [body, mac, extra] = token.split('.');
    if (body === undefined || mac === undefined || extra !== undefined) return 'malformed';
    if (!equalInConstantTime(mac, this.#mac(body))) return 'forged';
    try {
      const text = fromBase64UrlText(body);
      if (text === undefined) return 'malformed';
      const claims = JSON.parse(text) as Partial<TokenClaims>;
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
    return this.#hmac(`${purpose}\n${text}`);
  }

  #mac(body: string): string {
    return this.#hmac(body);
  }
}
