/**
 * A Redis script that checks the caller's credential before doing anything: the one place that
 * builds and runs such a script (the hot routes' pool pops, message appends and reads; why and when:
 * revocation.ts and docs/security.md#the-credential-check-on-hot-routes).
 *
 * Its .lua file declares the guard's optional tail after its own slots (two KEYS: the caller's
 * logout blacklist key and credential state key; one ARGV: the state the credential carries) and
 * starts its code with `{{revocationGuard}}`. `GuardedScript.load` fills that in for the slots the
 * wrapper names, so no call site counts positions; `run` appends the tail when the request carries
 * a Revocation, and runs the script without the check otherwise (a Redis Cluster, internal callers).
 *
 * Invariant: the guard comes first and writes nothing; it answers REVOKED (the session is logged
 * out) or UNCHECKED (the state key does not hold the expected state, or is missing), and
 * `runGuarded` turns those into a 401 or the full check and one more run.
 */
import type { RedisClient } from '../redis/connection.js';
import { RedisScript, type ScriptArg, type ScriptLayout } from '../redis/script.js';
import { TokenRevokedError, type Revocation } from './revocation.js';

/**
 * The error replies of the guard. Each is a code and a message: Redis 7 prefixes an error reply of
 * one word with "ERR ", so a bare code would not come back as sent.
 */
const REVOKED = 'REVOKED';
const REVOKED_REPLY = `${REVOKED} the session is logged out`;
const UNCHECKED = 'UNCHECKED';
const UNCHECKED_REPLY = `${UNCHECKED} the credential state is not the one the credential carries`;

/**
 * The guard's Lua: when KEYS[index] (the caller's logout blacklist key) is given, refuse when it
 * exists, and refuse when KEYS[index + 1] (the credential's state) does not hold the script's last
 * ARGV (the state the credential carries).
 */
function guardLua(index: number): string {
  return `if KEYS[${index}] then
  if redis.call('EXISTS', KEYS[${index}]) == 1 then return redis.error_reply('${REVOKED_REPLY}') end
  if redis.call('GET', KEYS[${index + 1}]) ~= ARGV[#ARGV] then return redis.error_reply('${UNCHECKED_REPLY}') end
end`;
}

export class GuardedScript<K extends string = string, A extends string = string> {
  private constructor(private readonly script: RedisScript<K, A>) {}

  /**
   * Reads the script (RedisScript.load) with the guard filled in after its named KEYS; throws (at
   * module load) unless its header declares the guard's tail right after its own slots.
   */
  static load<const K extends string, const A extends string>(
    name: string,
    file: URL,
    layout: ScriptLayout<K, A>,
    /** Other `{{name}}` parts of the script (RedisScript.load's), e.g. the pools' AOF guard. */
    parts: Readonly<Record<string, string>> = {},
  ): GuardedScript<K, A> {
    const keyIndex = layout.keys.length + 1;
    const argIndex = layout.args.length + 1;
    const script = RedisScript.load(name, file, layout, { ...parts, revocationGuard: guardLua(keyIndex) });
    for (const tail of [`-- KEYS[${keyIndex}..${keyIndex + 1}] `, `-- ARGV[${argIndex}..${argIndex}] `]) {
      if (!script.source.includes(tail)) throw new Error(`Lua script "${name}": its header does not declare the credential guard's slots (${tail.trim()})`);
    }
    return new GuardedScript(script);
  }

  get name(): string {
    return this.script.name;
  }

  /** The Lua sent to Redis, guard included. */
  get source(): string {
    return this.script.source;
  }

  /** Runs the script, after the credential check of `revocation` when given (its keys and expected state go after the script's own). */
  run<T = unknown>(
    client: RedisClient,
    keys: Readonly<Record<K, string>>,
    args: Readonly<Record<A, ScriptArg>>,
    revocation: Revocation | undefined,
  ): Promise<T> {
    return this.script.run<T>(client, keys, args, revocation ? { keys: revocation.keys, args: [revocation.arg] } : {});
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

/**
 * Runs `run` (which runs a guarded script); when it answers UNCHECKED, makes the full check (401
 * when stale; the state is stored when it was missing) and runs it once more. A REVOKED answer is a
 * TokenRevokedError.
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
