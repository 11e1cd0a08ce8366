/**
 * The Redis settings that contradict each other, refused when the configuration is loaded, each
 * with a message naming the variables involved (never their values: two of them are passwords):
 *
 * - one way to Redis: REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES, not two;
 * - REDIS_SENTINELS and REDIS_SENTINEL_NAME go together; REDIS_SENTINEL_PASSWORD needs the sentinels;
 * - REDIS_PASSWORD is for the sentinel and cluster modes: REDIS_URL carries its own password, and
 *   the embedded redis-server has a generated one;
 * - the host:port lists parse;
 * - REDIS_REPLICA_ACKS needs replicas, which the embedded redis-server does not have, and its wait
 *   must end before the request paths' own Redis deadlines, or those would answer first and the
 *   wait could never report a shortfall in time.
 */
import type { Config } from './index.js';
import { parseHostPorts } from '../redis/redis-target.js';

export interface SettingProblem {
  variable: string;
  message: string;
}

export function redisSettingsProblem(config: Pick<Config, 'redis' | 'messages'>): SettingProblem | undefined {
  const r = config.redis;
  const modes = [
    ['REDIS_URL', r.url],
    ['REDIS_SENTINELS', r.sentinels],
    ['REDIS_CLUSTER_NODES', r.clusterNodes],
  ].filter(([, v]) => v !== undefined);
  if (modes.length > 1) {
    const names = modes.map(([n]) => n!);
    return { variable: names[1]!, message: `set only one of REDIS_URL, REDIS_SENTINELS and REDIS_CLUSTER_NODES (got ${names.join(' and ')})` };
  }
  if (r.sentinels && !r.sentinelName)
    return { variable: 'REDIS_SENTINEL_NAME', message: 'required with REDIS_SENTINELS (the master group name the sentinels monitor)' };
  if (r.sentinelName && !r.sentinels) return { variable: 'REDIS_SENTINEL_NAME', message: 'set only with REDIS_SENTINELS' };
  if (r.sentinelPassword && !r.sentinels) return { variable: 'REDIS_SENTINEL_PASSWORD', message: 'set only with REDIS_SENTINELS' };
  if (r.password && r.url) return { variable: 'REDIS_PASSWORD', message: 'not with REDIS_URL, which carries its own password (redis://:password@host:port)' };
  if (r.password && !r.sentinels && !r.clusterNodes)
    return { variable: 'REDIS_PASSWORD', message: 'set only with REDIS_SENTINELS or REDIS_CLUSTER_NODES (the embedded redis-server has a generated password)' };
  for (const [variable, spec] of [
    ['REDIS_SENTINELS', r.sentinels],
    ['REDIS_CLUSTER_NODES', r.clusterNodes],
  ] as const) {
    if (spec === undefined) continue;
    try {
      parseHostPorts(variable, spec);
    } catch (err) {
      return { variable, message: (err as Error).message.slice(variable.length + 2) };
    }
  }
  if (r.replicaAcks > 0) {
    if (modes.length === 0)
      return {
        variable: 'REDIS_REPLICA_ACKS',
        message: 'the embedded redis-server has no replica: set REDIS_SENTINELS, REDIS_CLUSTER_NODES or REDIS_URL (a master with replicas)',
      };
    for (const [variable, ms] of [
      ['REDIS_COMMAND_TIMEOUT_MS', r.commandTimeoutMs],
      ['MESSAGE_REDIS_TIMEOUT_MS', config.messages.redisTimeoutMs],
    ] as const) {
      if (r.replicaAckTimeoutMs >= ms)
        return {
          variable: 'REDIS_REPLICA_ACK_TIMEOUT_MS',
          message: `must be shorter than ${variable} (${ms}), the deadline of the writes that wait for their replicas`,
        };
    }
  }
  return undefined;
}
