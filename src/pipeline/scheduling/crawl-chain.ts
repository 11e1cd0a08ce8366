/**
 * The crawl chain of each IP: one Redis hash, ipId → the task id of the IP's current link.
 *
 * States of an IP's entry:
 *   absent        not scheduled: inactive or deleted IP (or Redis lost it; reconciliation repairs)
 *   T (pending)   crawl job T is delayed, waiting or prioritized
 *   T (running)   crawl job T is active, or completed with its result `result-T` in the pipeline
 *
 * Moves (each one Lua script, so concurrent API calls, pipeline workers and the leader agree):
 *   claim(ip, T)          absent → T                      (new IP, activation, reconciliation)
 *   advance(ip, T, N)     T → N = nextTaskId(T)           (result processed, or crawl T failed)
 *   release(ip, [T])      any (or exactly T) → absent     (deactivate, delete)
 *
 * The entry is written BEFORE the BullMQ job is added, so a crawl job in a pending or active set
 * always has (or had) its entry; a crash between the two leaves an entry without a job, which
 * reconciliation finds and re-adds under the same id. Only the holder of the entry may add the
 * job, which is what keeps "exactly one pending crawl per active IP".
 */
import type { RedisClient } from '../../redis/connection.js';
import type { Keys } from '../../redis/keys.js';
import { RedisScript } from '../../redis/script.js';

const claimMany = new RedisScript(
  'crawl-chain-claim',
  `-- KEYS[1] chain hash
-- ARGV pairs: ipId, candidate task id
-- Returns per pair: the candidate when it was claimed, else the task id already there, prefixed "="
local out = {}
for i = 1, #ARGV, 2 do
  if redis.call('HSETNX', KEYS[1], ARGV[i], ARGV[i + 1]) == 1 then
    out[#out + 1] = ARGV[i + 1]
  else
    out[#out + 1] = '=' .. redis.call('HGET', KEYS[1], ARGV[i])
  end
end
return out`,
);

const advanceScript = new RedisScript(
  'crawl-chain-advance',
  `-- KEYS[1] chain hash
-- ARGV[1] ipId, ARGV[2] from task id, ARGV[3] next task id
-- Returns 'advanced' (was from, now next), 'already' (was next already), 'none' (no entry),
-- or 'stale:<current>' (the chain belongs to another task)
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if cur == ARGV[2] then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
  return 'advanced'
elseif cur == ARGV[3] then
  return 'already'
elseif not cur then
  return 'none'
end
return 'stale:' .. cur`,
);

const releaseScript = new RedisScript(
  'crawl-chain-release',
  `-- KEYS[1] chain hash
-- ARGV[1] ipId, ARGV[2] expected task id or '' for any
-- Returns the released task id, or false when nothing (or another task) held the entry
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if not cur or (ARGV[2] ~= '' and cur ~= ARGV[2]) then return false end
redis.call('HDEL', KEYS[1], ARGV[1])
return cur`,
);

export type AdvanceOutcome = { kind: 'advanced' | 'already' | 'none' } | { kind: 'stale'; current: string };

export class CrawlChain {
  private readonly key: string;

  constructor(
    private readonly redis: RedisClient,
    keys: Keys,
  ) {
    this.key = keys.crawlChain();
  }

  async current(ipId: number): Promise<string | undefined> {
    return (await this.redis.hget(this.key, String(ipId))) ?? undefined;
  }

  async all(): Promise<Map<number, string>> {
    const raw = await this.redis.hgetall(this.key);
    return new Map(Object.entries(raw).map(([ip, task]) => [Number(ip), task]));
  }

  async size(): Promise<number> {
    return this.redis.hlen(this.key);
  }

  /** Claims the chain of each IP that has none. Returns ipId → {taskId, claimed}. */
  async claim(candidates: readonly { ipId: number; taskId: string }[]): Promise<Map<number, { taskId: string; claimed: boolean }>> {
    const out = new Map<number, { taskId: string; claimed: boolean }>();
    if (!candidates.length) return out;
    const reply = await claimMany.run<string[]>(this.redis, [this.key], candidates.flatMap((c) => [c.ipId, c.taskId]));
    candidates.forEach((c, i) => {
      const r = reply[i]!;
      out.set(c.ipId, r.startsWith('=') ? { taskId: r.slice(1), claimed: false } : { taskId: r, claimed: true });
    });
    return out;
  }

  async advance(ipId: number, from: string, next: string): Promise<AdvanceOutcome> {
    const r = await advanceScript.run<string>(this.redis, [this.key], [ipId, from, next]);
    if (r.startsWith('stale:')) return { kind: 'stale', current: r.slice('stale:'.length) };
    return { kind: r as 'advanced' | 'already' | 'none' };
  }

  /** Removes the entry (only when it is `expected`, if given). Returns the task id removed. */
  async release(ipId: number, expected?: string): Promise<string | undefined> {
    return (await releaseScript.run<string | null>(this.redis, [this.key], [ipId, expected ?? ''])) ?? undefined;
  }
}
