/**
 * Which Redis a process talks to, as the settings name it (src/config/platform.ts):
 *
 * - `single`: one server, REDIS_URL (its password in the URL), or the embedded redis-server;
 * - `sentinel`: the master a group of Redis Sentinels watches, REDIS_SENTINELS + REDIS_SENTINEL_NAME;
 *   every connection asks a sentinel for the current master when it (re)connects, and checks the
 *   server's role, so after a failover it lands on the promoted replica (src/redis/connection.ts);
 * - `cluster`: a Redis Cluster, REDIS_CLUSTER_NODES (seeds).
 *
 * The passwords (REDIS_PASSWORD for the data nodes, REDIS_SENTINEL_PASSWORD for the sentinels) are
 * carried here and handed to ioredis only; `describeTarget` is what may be logged.
 */
import type { Config } from '../config/index.js';

export interface HostPort {
  host: string;
  port: number;
}

export type RedisTarget =
  | { kind: 'single'; url: string }
  | { kind: 'sentinel'; sentinels: HostPort[]; name: string; password?: string; sentinelPassword?: string }
  | { kind: 'cluster'; nodes: HostPort[]; password?: string };

/** `host:port,host:port` (IPv6 as `[::1]:26379`); throws naming `variable` when an entry is not one. */
export function parseHostPorts(variable: string, spec: string): HostPort[] {
  const entries = spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!entries.length) throw new Error(`${variable}: no host:port given`);
  return entries.map((entry) => {
    const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:\s[\]]+)):(\d{1,5})$/.exec(entry);
    const port = Number(m?.[3]);
    if (!m || port < 1 || port > 65_535) throw new Error(`${variable}: "${entry}" is not host:port`);
    return { host: m[1] ?? m[2]!, port };
  });
}

/** The target with its passwords left out: what a log line or an error may show. */
export function describeTarget(target: RedisTarget): string {
  const list = (nodes: HostPort[]) => nodes.map((n) => (n.host.includes(':') ? `[${n.host}]:${n.port}` : `${n.host}:${n.port}`)).join(',');
  switch (target.kind) {
    case 'single': {
      try {
        const url = new URL(target.url);
        return `${url.protocol}//${url.host}${url.pathname === '/' ? '' : url.pathname}`;
      } catch {
        return 'redis (REDIS_URL)';
      }
    }
    case 'sentinel':
      return `master "${target.name}" of the sentinels ${list(target.sentinels)}`;
    case 'cluster':
      return `Redis Cluster ${list(target.nodes)}`;
  }
}

/** The Redis the settings name (REDIS_SENTINELS, REDIS_CLUSTER_NODES or REDIS_URL); undefined = the embedded redis-server. */
export function configuredRedis(config: Pick<Config, 'redis'>): RedisTarget | undefined {
  const r = config.redis;
  const password = r.password ? { password: r.password } : {};
  if (r.sentinels) {
    return {
      kind: 'sentinel',
      sentinels: parseHostPorts('REDIS_SENTINELS', r.sentinels),
      name: r.sentinelName ?? '',
      ...password,
      ...(r.sentinelPassword ? { sentinelPassword: r.sentinelPassword } : {}),
    };
  }
  if (r.clusterNodes) return { kind: 'cluster', nodes: parseHostPorts('REDIS_CLUSTER_NODES', r.clusterNodes), ...password };
  if (r.url) return { kind: 'single', url: r.url };
  return undefined;
}
