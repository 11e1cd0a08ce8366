/**
 * The logout-blacklist check carried by a request's own Redis command.
 *
 * Every authenticated request must be refused once its session is logged out, and the check
 * reads Redis. On the hot routes (pool pops, message appends and reads) the request's work is a
 * single Redis script anyway, so the check goes inside that script: one round trip instead of
 * two, and the script does nothing when the session is listed (it answers the REVOKED error).
 * Such a route declares `revocation: 'in-handler'`; its token is verified by the auth middleware
 * (signature, expiry) and its handler gets a Revocation to hand to its script.
 *
 * When the script cannot run (Redis down, a deadline passed), the handler calls `check()` before
 * any fallback: the usual check, which refuses (401) a listed session and, when Redis cannot
 * answer, fails secure (503) unless AUTH_FAIL_OPEN=true.
 *
 * Redis Cluster: the blacklist key lives in its own slot, so a script cannot read it beside the
 * request's keys (CROSSSLOT); there the middleware checks the blacklist up front as on every
 * other route and the handler gets no Revocation.
 */
import { HttpError } from '../errors.js';

/** The error reply of a guarded script whose session is logged out. */
const REVOKED = 'REVOKED';

/**
 * The first line of a guarded script: refuse when the blacklist key (KEYS[index], absent when
 * the request carries no Revocation) exists. Nothing before it may write.
 */
export function revocationGuardLua(index: number): string {
  return `if KEYS[${index}] and redis.call('EXISTS', KEYS[${index}]) == 1 then return redis.error_reply('${REVOKED}') end`;
}

export class TokenRevokedError extends HttpError {
  constructor() {
    super(401, 'token_revoked', 'the token was logged out');
  }
}

/** True for the reply of a guarded script that refused a logged-out session. */
export function isRevokedReply(err: unknown): boolean {
  const e = err as { name?: unknown; message?: unknown } | undefined;
  return e?.name === 'ReplyError' && typeof e.message === 'string' && e.message.startsWith(REVOKED);
}

export class Revocation {
  private used = false;

  constructor(
    private readonly blacklistKey: string,
    private readonly checkSeparately: () => Promise<void>,
  ) {}

  /** The blacklist key for the guarded script (see revocationGuardLua). */
  get key(): string {
    this.used = true;
    return this.blacklistKey;
  }

  /** The check on its own, for when the script could not run: throws 401 when listed, 503 when Redis is down (fail secure). */
  async check(): Promise<void> {
    this.used = true;
    await this.checkSeparately();
  }

  /** Whether the handler took the check over (routes verify this after the handler). */
  get taken(): boolean {
    return this.used;
  }
}

/** The keys of a guarded script: `keys`, then the blacklist key when the request carries one. */
export function guardedKeys(keys: string[], revocation: Revocation | undefined): string[] {
  return revocation ? [...keys, revocation.key] : keys;
}
