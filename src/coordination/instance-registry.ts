/**
 * The live instance registry: every process (any role) heartbeats its id, roles and queues.
 *
 * Keys, all in the `{registry}` slot so one script updates them together (Redis Cluster):
 *   …:instances            ZSET id → lastSeen (Redis time, ms)
 *   …:instance:<id>        JSON details, PX INSTANCE_TTL_MS: gone when the instance stops beating
 *   …:role:<role>          ZSET id → lastSeen, one per role   (the reference's member index)
 *   …:queue:<queue>        ZSET id → lastSeen, one per queue
 *   …:memberships          SET of the role/queue keys in use (for the cleanup)
 *
 * A heartbeat every INSTANCE_TTL_MS/3 rewrites the details with their TTL and the lastSeen
 * scores; readers list only instances whose details still exist, so a dead instance leaves the
 * list within the TTL. Its ids in the sorted sets are trimmed by the leader's cleanup
 * (trimRegistry, the leader's `instance-registry-trim` maintenance task); a stopping instance removes itself at once.
 */
import os from 'node:os';
import { OutageLog } from '../lib/outage-log.js';
import type { Logger } from '../logging/logger.js';
import type { RedisClient } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import { RedisScript } from '../redis/script.js';

type RegistryKeys = Pick<Keys, 'instanceIndex' | 'instance' | 'instancesByRole' | 'instancesByQueue' | 'membershipIndex'>;

/** What an instance says about itself at each heartbeat. */
export interface InstanceDetails {
  id: string;
  roles: string[];
  queues: string[];
  host: string;
  pid: number;
  startedAt: string;
  /** Singleton tasks it competes for, and those it holds (the API's names: works, leads). */
  works: string[];
  leads: string[];
  config: { version: number | null; source: 'shared' | 'local' | null };
  /** Digests of the fleet settings its roles use (fleet-settings.ts); absent from older processes. */
  settings?: Record<string, string>;
}

export interface InstanceInfo extends InstanceDetails {
  lastSeen: string;
}

/** One heartbeat: details with their TTL, lastSeen in every set (registry-heartbeat.lua). */
const heartbeat = RedisScript.load('registry-heartbeat', new URL('./registry-heartbeat.lua', import.meta.url), {
  keys: ['index', 'details', 'membershipIndex'],
  args: ['id', 'ttlMs', 'details'],
});

/** A stopping instance leaves the registry (registry-leave.lua). */
const leave = RedisScript.load('registry-leave', new URL('./registry-leave.lua', import.meta.url), { keys: ['index', 'details'], args: ['id'] });

/** The leader's cleanup of ids not heard from (registry-trim.lua). */
const trim = RedisScript.load('registry-trim', new URL('./registry-trim.lua', import.meta.url), { keys: ['index', 'membershipIndex'], args: ['ttlMs'] });

export interface InstanceRegistryDeps {
  redis: RedisClient;
  keys: RegistryKeys;
  instanceId: string;
  ttlMs: number;
  logger: Logger;
  /** The parts of the details that change: works, leads, config. */
  status: () => Pick<InstanceDetails, 'works' | 'leads' | 'config'>;
}

export class InstanceRegistry {
  private membership: { roles: string[]; queues: string[]; settings: Record<string, string> } | undefined;
  private readonly startedAt = new Date().toISOString();
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> | undefined;
  private stopping: Promise<void> | undefined;
  private readonly outage: OutageLog<Error>;

  constructor(private readonly deps: InstanceRegistryDeps) {
    this.outage = new OutageLog({
      began: (err) => deps.logger.warn({ err: err.message }, 'instance registry: heartbeat failed; retrying'),
      ended: () => deps.logger.info('instance registry: heartbeat restored'),
    });
  }

  /** Registers this process with its roles, queues and fleet setting digests, and starts the heartbeat. */
  start(membership: { roles: string[]; queues: string[]; settings?: Record<string, string> }): void {
    this.membership = { roles: [...new Set(membership.roles)], queues: [...new Set(membership.queues)], settings: membership.settings ?? {} };
    void this.beat();
    this.timer = setInterval(() => void this.beat(), Math.max(100, Math.floor(this.deps.ttlMs / 3)));
    this.timer.unref();
  }

  details(): InstanceDetails {
    const { roles, queues, settings } = this.membership ?? { roles: [], queues: [], settings: {} };
    return { id: this.deps.instanceId, roles, queues, host: os.hostname(), pid: process.pid, startedAt: this.startedAt, ...this.deps.status(), settings };
  }

  /** Stops the heartbeat and removes this instance from the registry. Idempotent. */
  stop(): Promise<void> {
    return (this.stopping ??= (async () => {
      clearInterval(this.timer);
      await this.beating;
      if (!this.membership) return;
      await leave
        .run(
          this.deps.redis,
          { index: this.deps.keys.instanceIndex(), details: this.deps.keys.instance(this.deps.instanceId) },
          { id: this.deps.instanceId },
          { keys: this.membershipKeys() },
        )
        .catch(() => undefined);
    })());
  }

  private membershipKeys(): string[] {
    const { roles, queues } = this.membership ?? { roles: [], queues: [] };
    return [...roles.map((r) => this.deps.keys.instancesByRole(r)), ...queues.map((q) => this.deps.keys.instancesByQueue(q))];
  }

  private beat(): Promise<void> {
    if (this.beating || this.stopping) return this.beating ?? Promise.resolve();
    const { redis, keys, instanceId, ttlMs } = this.deps;
    this.beating = heartbeat
      .run(
        redis,
        { index: keys.instanceIndex(), details: keys.instance(instanceId), membershipIndex: keys.membershipIndex() },
        { id: instanceId, ttlMs, details: JSON.stringify(this.details()) },
        { keys: this.membershipKeys() },
      )
      .then(
        () => this.outage.success(),
        (err: Error) => this.outage.failure(err),
      )
      .finally(() => (this.beating = undefined));
    return this.beating;
  }
}

/** The live instances (details present), with their last heartbeat, ordered by id. */
export async function listInstances(redis: RedisClient, keys: RegistryKeys): Promise<InstanceInfo[]> {
  const flat = (await redis.zrange(keys.instanceIndex(), 0, '-1', 'WITHSCORES')) as string[];
  if (!flat.length) return [];
  const ids: string[] = [];
  const seen = new Map<string, number>();
  for (let i = 0; i < flat.length; i += 2) {
    ids.push(flat[i]!);
    seen.set(flat[i]!, Number(flat[i + 1]));
  }
  const details = await redis.mget(...ids.map((id) => keys.instance(id)));
  const out: InstanceInfo[] = [];
  details.forEach((text, i) => {
    if (!text) return;
    try {
      const d = JSON.parse(text) as InstanceDetails;
      out.push({ ...d, lastSeen: new Date(seen.get(ids[i]!)!).toISOString() });
    } catch {
      /* unreadable entry: skip */
    }
  });
  return out.sort((a, b) => a.id.localeCompare(b.id));
}

/** Ids registered for a role or a queue and heard from within the TTL. */
export async function membersOf(redis: RedisClient, keys: RegistryKeys, kind: 'role' | 'queue', name: string, ttlMs: number): Promise<string[]> {
  const key = kind === 'role' ? keys.instancesByRole(name) : keys.instancesByQueue(name);
  const [seconds, micros] = await redis.time();
  const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  return redis.zrangebyscore(key, String(now - ttlMs), '+inf');
}

/** The leader's cleanup: drops ids not seen for a TTL from the index and every membership set. */
export async function trimRegistry(redis: RedisClient, keys: RegistryKeys, ttlMs: number): Promise<number> {
  const memberships = await redis.smembers(keys.membershipIndex());
  return trim.run<number>(redis, { index: keys.instanceIndex(), membershipIndex: keys.membershipIndex() }, { ttlMs }, { keys: memberships });
}
