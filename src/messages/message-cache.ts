/**
 * The session message cache in Redis (reference: message-cache-and-auth.md 2.1, 4): one list
 * per session, `chat:session:{id}:messages`, oldest first, at most MESSAGE_CACHE_MAX_LEN
 * entries, expiring MESSAGE_CACHE_TTL_SECONDS after the last write.
 *
 * Commands go over the message cache's own connections (MessageConnections): a session always
 * uses the same one, so the appends of one process reach Redis in the order their `seq` was
 * assigned.
 */
import { guardedArgs, guardedKeys, revocationGuardLua, type Revocation } from '../revocation/revocation.js';
import type { Keys } from '../redis/keys.js';
import { RedisScript } from '../redis/script.js';
import { onSessionConnection, type MessageConnections } from './message-connections.js';
import { SESSION_START, entryOf, type MessageView } from './message-entry.js';

/**
 * The append of reference 4.1 (RPUSH + EXPIRE + LTRIM, one atomic step: the reference's MULTI as
 * one script), after the caller's credential check when given (src/revocation/revocation.ts).
 */
const APPEND_SCRIPT = new RedisScript(
  'message-cache-append',
  `-- KEYS[1]  the session's list
-- KEYS[2], KEYS[3] (optional) the caller's logout blacklist key and credential state key: the REVOKED
--          or UNCHECKED error and no write unless the first is absent and the second holds ARGV[4]
-- ARGV[1]  the entry   ARGV[2]  TTL in seconds   ARGV[3]  max length   ARGV[4] (with KEYS[2]) the caller's credential state
-- Returns the list length before the trim.
${revocationGuardLua(2)}
local len = redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[2])
redis.call('LTRIM', KEYS[1], -tonumber(ARGV[3]), -1)
return len`,
);

/** The newest ARGV[1] entries, after the caller's credential check when given. */
const READ_SCRIPT = new RedisScript(
  'message-cache-read',
  `-- KEYS[1]  the session's list
-- KEYS[2], KEYS[3] (optional) the caller's logout blacklist key and credential state key: the REVOKED
--          or UNCHECKED error unless the first is absent and the second holds ARGV[2]
-- ARGV[1]  how many entries (from the end)   ARGV[2] (with KEYS[2]) the caller's credential state
${revocationGuardLua(2)}
return redis.call('LRANGE', KEYS[1], -tonumber(ARGV[1]), -1)`,
);

/**
 * Merges a session's list with a snapshot of its newest rows in the DB, so that no message held
 * by either is lost: a message is in the DB or, until its persist job has run, in the list.
 * Sorted by (seq, id), de-duplicated by id, the newest max-length kept.
 */
const MERGE_SCRIPT = new RedisScript(
  'message-cache-merge',
  `-- KEYS[1]  the session's list
-- ARGV[1]  max length (LTRIM)          ARGV[2]  TTL in seconds
-- ARGV[3]  '1' when the snapshot starts at the session's first message (the list gets the start marker)
-- ARGV[4]  'fill': after a read miss; skipped when the list already answers every read (marker, or full)
--          'repair': after a failed cache write; only when the list exists
-- ARGV[5]  the start marker
-- ARGV[6..] the snapshot, oldest first, as triples: seq, id, entry
-- Returns the number of messages merged, -1 when a repair found no list, -2 when a fill was not needed.
local key = KEYS[1]
local maxLen = tonumber(ARGV[1])
local marker = ARGV[5]
local current = redis.call('LRANGE', key, 0, -1)
if ARGV[4] == 'repair' and #current == 0 then return -1 end
if ARGV[4] == 'fill' and (current[1] == marker or #current >= maxLen) then return -2 end
local rows, seen = {}, {}
for i = 6, #ARGV, 3 do
  local id = ARGV[i + 1]
  if not seen[id] then
    seen[id] = true
    rows[#rows + 1] = { tonumber(ARGV[i]), id, ARGV[i + 2] }
  end
end
for _, entry in ipairs(current) do
  if entry ~= marker then
    local ok, m = pcall(cjson.decode, entry)
    if ok and type(m) == 'table' and type(m.id) == 'string' and not seen[m.id] then
      seen[m.id] = true
      rows[#rows + 1] = { tonumber(m.seq) or 0, m.id, entry }
    end
  end
end
table.sort(rows, function(a, b)
  if a[1] ~= b[1] then return a[1] < b[1] end
  return a[2] < b[2]
end)
local out = {}
if ARGV[3] == '1' then out[1] = marker end
for i = math.max(1, #rows - maxLen + 1), #rows do out[#out + 1] = rows[i][3] end
redis.call('DEL', key)
for i = 1, #out, 1000 do redis.call('RPUSH', key, unpack(out, i, math.min(i + 999, #out))) end
redis.call('LTRIM', key, -maxLen, -1)
redis.call('EXPIRE', key, ARGV[2])
return #rows`,
);

export interface MessageCacheSettings {
  cacheMaxLen: number;
  cacheTtlSeconds: number;
}

export type MergeMode = 'fill' | 'repair';

export class MessageCache {
  constructor(
    private readonly connections: MessageConnections,
    private readonly keys: Keys,
    private readonly settings: MessageCacheSettings,
  ) {}

  /** True once the connections were closed (the process is shutting down). */
  get closed(): boolean {
    return this.connections.closed;
  }

  /**
   * RPUSH + EXPIRE + LTRIM in one atomic script (reference 4.1); throws when it failed, and with
   * the REVOKED (UNCHECKED) error reply when `revocation` finds the caller logged out (cannot confirm
   * the caller's credential), nothing written. The
   * command is written before this returns (unless the connection is still being made).
   */
  async append(sessionId: string, entry: string, revocation?: Revocation): Promise<void> {
    const { cacheMaxLen, cacheTtlSeconds } = this.settings;
    const keys = guardedKeys([this.keys.sessionMessages(sessionId)], revocation);
    const args = guardedArgs([entry, cacheTtlSeconds, cacheMaxLen], revocation);
    await onSessionConnection(this.connections, sessionId, (client) => APPEND_SCRIPT.run(client, keys, args));
  }

  /** The last `count` list elements (the start marker included when it is among them); REVOKED as for append. */
  read(sessionId: string, count: number, revocation?: Revocation): Promise<string[]> {
    const keys = guardedKeys([this.keys.sessionMessages(sessionId)], revocation);
    const args = guardedArgs([count], revocation);
    return onSessionConnection(this.connections, sessionId, (client) => READ_SCRIPT.run<string[]>(client, keys, args));
  }

  /** Removes one entry (an append whose message could not be made durable). */
  async remove(sessionId: string, entry: string): Promise<void> {
    await onSessionConnection(this.connections, sessionId, (client) => client.lrem(this.keys.sessionMessages(sessionId), 1, entry));
  }

  /** Merges the list with a DB snapshot (oldest first); see MERGE_SCRIPT. */
  merge(sessionId: string, snapshot: MessageView[], complete: boolean, mode: MergeMode): Promise<number> {
    const { cacheMaxLen, cacheTtlSeconds } = this.settings;
    const args: (string | number)[] = [cacheMaxLen, cacheTtlSeconds, complete ? '1' : '0', mode, SESSION_START];
    for (const v of snapshot.slice(-cacheMaxLen)) args.push(String(v.seq), v.id, entryOf(v));
    return onSessionConnection(this.connections, sessionId, (client) => MERGE_SCRIPT.run<number>(client, [this.keys.sessionMessages(sessionId)], args));
  }
}
