/**
 * The credential check carried by a request's own Redis command: infrastructure of the request
 * path. The auth domain makes a Revocation for a request (src/auth/auth-service.ts); the domains
 * whose hot routes run one Redis script (pools, messages) put its guard into that script, without
 * knowing anything else of auth.
 *
 * Every authenticated request must be refused once its session is logged out or its credential
 * changed (a password, role or disabled change of its user, a revoked API key: src/auth/credential-state.ts),
 * and both checks read Redis. On the hot routes (pool pops, message appends and reads) the
 * request's work is a single Redis script anyway, so the check goes inside that script: one round
 * trip instead of two. The script first refuses a listed session (the REVOKED error), then a
 * credential whose state key does not hold the state the credential carries (the UNCHECKED error:
 * stale, or not in Redis at all), and writes nothing either way. Such a route declares
 * `revocation: 'in-handler'`; its credential is verified by the dispatcher (src/http/authenticate.ts: signature,
 * expiry) and its handler gets a Revocation to hand to its script.
 *
 * UNCHECKED is answered by `check()`: the full check, which reads the state from the database when
 * Redis has none (and stores it), then refuses (401) a stale credential; after it the script can be
 * run again. When the script cannot run (Redis down, a deadline passed), the handler calls
 * `check()` before any fallback; when Redis cannot answer it fails secure (503) unless
 * AUTH_FAIL_OPEN=true.
 *
 * Redis Cluster: the blacklist and state keys live in their own slots, so a script cannot read
 * them beside the request's keys (CROSSSLOT); there the dispatcher checks up front as on every
 * other route and the handler gets no Revocation.
 */
import { UnauthenticatedError } from '../errors.js';
import type { ScriptTail } from '../redis/script.js';

/**
 * The error replies of a guarded script: its session is logged out; its credential state is not
 * the expected one (or not in Redis). Each is a code and a message: Redis 7 prefixes an error
 * reply of one word with "ERR ", so a bare code would not come back as sent.
 */
const REVOKED = 'REVOKED';
const REVOKED_REPLY = `${REVOKED} the session is logged out`;
const UNCHECKED = 'UNCHECKED';
const UNCHECKED_REPLY = `${UNCHECKED} the credential state is not the one the credential carries`;

/**
 * The first lines of a guarded script: when KEYS[index] (the caller's logout blacklist key) is
 * given, refuse when it exists, and refuse when KEYS[index + 1] (the credential's state) does not
 * hold the script's last ARGV (the state the credential carries). Nothing before it may write.
 */
export function revocationGuardLua(index: number): string {
  return `if KEYS[${index}] then
  if redis.call('EXISTS', KEYS[${index}]) == 1 then return redis.error_reply('${REVOKED_REPLY}') end
  if redis.call('GET', KEYS[${index + 1}]) ~= ARGV[#ARGV] then return redis.error_reply('${UNCHECKED_REPLY}') end
end`;
}

export class TokenRevokedError extends UnauthenticatedError {
  constructor() {
    super('token_revoked', 'the token was logged out');
  }
}

function isReplyStarting(err: unknown, prefix: string): boolean {
  const e = err as { name?: unknown; message?: unknown } | undefined;
  return e?.name === 'ReplyError' && typeof e.message === 'string' && e.message.startsWith(`${prefix} `);
}

/** True for the reply of a guarded script that refused a logged-out session. */
export function isRevokedReply(err: unknown): boolean {
  return isReplyStarting(err, REVOKED);
}

/** True for the reply of a guarded script that could not confirm the credential: call `check()`, then run it again. */
export function isUncheckedReply(err: unknown): boolean {
  return isReplyStarting(err, UNCHECKED);
}

export class Revocation {
  private used = false;

  constructor(
    private readonly blacklistKey: string,
    private readonly stateKey: string,
    private readonly expectedState: string,
    private readonly checkSeparately: () => Promise<void>,
  ) {}

  /** The keys of the guard (see revocationGuardLua): the blacklist key, then the state key. */
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

/**
 * The guard's part of a guarded script's keys and arguments, after its own (ScriptTail): the two
 * keys, and the expected state as the last ARGV, when the request carries a Revocation.
 */
export function guardTail(revocation: Revocation | undefined): ScriptTail {
  return revocation ? { keys: revocation.keys, args: [revocation.arg] } : {};
}

/**
 * Runs a guarded script; when it answers UNCHECKED, makes the full check (401 when stale; the state
 * is stored when it was missing) and runs it once more. A REVOKED answer is a TokenRevokedError.
 */
export async function runGuarded<T>(revocation: Revocation | undefined, run: () => Promise<T>): Promise<T> {
  try {
    try {
      return await run();
    } catch (err) {
      if (!revocation || !isUncheckedReply(err)) throw err;
      await revocation.check();
      return await run();
    }
  } catch (err) {
    if (isRevokedReply(err)) throw new TokenRevokedError();
    throw err;
  }
}
