/**
 * Access tokens that passed the revocation checks (not revoked by /logout, their OAuth grant
 * still there), remembered per process so that a client sending the same token with every
 * request costs one read of its user's row instead of three index probes.
 *
 * Glossary: the *epoch* is `users.token_epoch`, which the database bumps in the same
 * transaction as every revocation of one of the user's access tokens and every deletion of
 * one of their grants (migration 0066). An entry holds the epoch read before its checks ran;
 * authentication reads the user's row on every request anyway, and trusts the entry only
 * while the row still shows that epoch. A revocation anywhere is therefore seen by every
 * process on the very next request, with no notification to wait for.
 */
export interface PassedToken {
  userId: number;
  epoch: number;
  /** Expiry of the token (ms); the entry is useless after it. */
  expiresAtMs: number;
}

export class PassedTokens {
  readonly #entries = new Map<string, PassedToken>();
  readonly #max: number;

  constructor(max = 20_000) {
    this.#max = max;
  }

  /** The entry of token `jti` when it is for `userId` and has not expired. */
  get(jti: string, userId: number): PassedToken | undefined {
    const entry = this.#entries.get(jti);
    if (!entry) return undefined;
    if (entry.userId !== userId || entry.expiresAtMs <= Date.now()) {
      this.#entries.delete(jti);
      return undefined;
    }
    return entry;
  }

  /** Remembers that token `jti` passed its checks at `epoch` (bounded: the oldest quarter goes when full). */
  remember(jti: string, entry: PassedToken): void {
    if (this.#entries.size >= this.#max && !this.#entries.has(jti)) {
      let drop = Math.max(1, Math.floor(this.#max / 4));
      for (const key of this.#entries.keys()) {
        this.#entries.delete(key);
        if (--drop <= 0) break;
      }
    }
    this.#entries.set(jti, entry);
  }

  /** Forgets token `jti` (its checks no longer hold). */
  forget(jti: string): void {
    this.#entries.delete(jti);
  }

  get size(): number {
    return this.#entries.size;
  }
}
