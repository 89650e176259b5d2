/**
 * One-time form tokens: each page shown gets a fresh random token bound to its error; a POST must bring it back
 * and uses it up. Bounded in number and lifetime, so a crawler fetching pages cannot grow memory.
 */
import { randomBytes } from 'crypto';

export const FORM_TOKEN_LIFETIME_MS = 30 * 60_000;
const MAX_TOKENS = 2000;

export class FormTokens {
  private readonly tokens = new Map<string, { errorKey: string; expires: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  issue(errorKey: string): string {
    const token = randomBytes(18).toString('base64url');
    this.prune();
    if (this.tokens.size >= MAX_TOKENS) this.tokens.delete(this.tokens.keys().next().value as string);
    this.tokens.set(token, { errorKey, expires: this.now() + FORM_TOKEN_LIFETIME_MS });
    return token;
  }

  /** True once for a token issued for this error and not yet used or expired. */
  use(token: unknown, errorKey: string): boolean {
    if (typeof token !== 'string') return false;
    const entry = this.tokens.get(token);
    if (!entry) return false;
    this.tokens.delete(token);
    return entry.errorKey === errorKey && entry.expires > this.now();
  }

  get size(): number {
    return this.tokens.size;
  }

  private prune(): void {
    const now = this.now();
    for (const [token, entry] of this.tokens) if (entry.expires <= now) this.tokens.delete(token);
  }
}
