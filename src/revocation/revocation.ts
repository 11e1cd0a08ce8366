/**
 * The credential check a request carries to its hot route's Redis script: infrastructure of the
 * request path (docs/security.md#the-credential-check-on-hot-routes). The auth domain makes a
 * Revocation for a request whose route declares `revocation: 'in-handler'`
 * (src/auth/credential-check.ts); the handler hands it to its guarded script (guarded-script.ts),
 * or calls `check()` before any fallback when the script cannot run. The domains with such routes
 * (pools, messages) know nothing else of auth.
 *
 * Invariants: every request is refused (401) once its session is logged out or its credential
 * changed, on these routes as on every other; `check()` fails secure (503) when Redis cannot answer
 * unless AUTH_FAIL_OPEN=true; a handler that took neither path gets the check from the dispatcher
 * after it (`taken`). On a Redis Cluster no Revocation is made: the dispatcher checks up front.
 */
import { UnauthenticatedError } from '../errors.js';

export class TokenRevokedError extends UnauthenticatedError {
  constructor() {
    super('token_revoked', 'the token was logged out');
  }
}

/**
 * A request's credential check, carried to its handler's guarded script (guarded-script.ts) or
 * made on its own (`check`). The dispatcher makes it after the handler when the handler did not take it.
 */
export class Revocation {
  private used = false;

  constructor(
    private readonly blacklistKey: string,
    private readonly stateKey: string,
    private readonly expectedState: string,
    private readonly checkSeparately: () => Promise<void>,
  ) {}

  /** The keys of the guard: the blacklist key, then the state key. */
  get keys(): [string, string] {
    this.used = true;
    return [this.blacklistKey, this.stateKey];
  }

  /** The guard's ARGV: the state the credential carries (the script's last ARGV). */
  get arg(): string {
    return this.expectedState;
  }

  /** The check on its own: throws 401 when logged out or stale, 503 when Redis is down (fail secure); fills a missing state. */
  async check(): Promise<void> {
    this.used = true;
    await this.checkSeparately();
  }

  /** Whether the handler took the check over (routes verify this after the handler). */
  get taken(): boolean {
    return this.used;
  }
}
