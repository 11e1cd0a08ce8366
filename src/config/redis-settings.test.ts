import { describe, expect, it } from 'vitest';
import { configuredRedis, describeTarget, parseHostPorts } from '../redis/redis-target.js';
import { ConfigError, describeConfig, loadConfig } from './index.js';

const DATA_PASSWORD = 'data-node-secret-5f2c9a';
const SENTINEL_PASSWORD = 'sentinel-secret-81be07';
const sentinelEnv = {
  REDIS_SENTINELS: '10.0.0.1:26379, 10.0.0.2:26379,[::1]:26380',
  REDIS_SENTINEL_NAME: 'mymaster',
  REDIS_PASSWORD: DATA_PASSWORD,
  REDIS_SENTINEL_PASSWORD: SENTINEL_PASSWORD,
};

/** The ConfigError loadConfig throws for `env`, or undefined. */
function refusal(env: NodeJS.ProcessEnv): ConfigError | undefined {
  try {
    loadConfig(env);
    return undefined;
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
}

describe('Redis settings', () => {
  it('REDIS_SENTINELS + REDIS_SENTINEL_NAME select the Sentinel master, with the two passwords kept apart', () => {
    const config = loadConfig(sentinelEnv);
    expect(config.derived.embeddedRedis).toBe(false);
    expect(configuredRedis(config)).toEqual({
      kind: 'sentinel',
      sentinels: [
        { host: '10.0.0.1', port: 26379 },
        { host: '10.0.0.2', port: 26379 },
        { host: '::1', port: 26380 },
      ],
      name: 'mymaster',
      password: DATA_PASSWORD,
      sentinelPassword: SENTINEL_PASSWORD,
    });
    expect(configuredRedis(loadConfig({ REDIS_CLUSTER_NODES: '127.0.0.1:7000', REDIS_PASSWORD: DATA_PASSWORD }))).toEqual({
      kind: 'cluster',
      nodes: [{ host: '127.0.0.1', port: 7000 }],
      password: DATA_PASSWORD,
    });
    expect(configuredRedis(loadConfig({}))).toBeUndefined();
  });

  it('refuses contradictory settings with a message naming them', () => {
    const cases: [NodeJS.ProcessEnv, string, RegExp][] = [
      [{ REDIS_URL: 'redis://127.0.0.1:6379', REDIS_CLUSTER_NODES: '127.0.0.1:7000' }, 'REDIS_CLUSTER_NODES', /REDIS_URL and REDIS_CLUSTER_NODES/],
      [{ ...sentinelEnv, REDIS_URL: 'redis://127.0.0.1:6379' }, 'REDIS_SENTINELS', /REDIS_URL and REDIS_SENTINELS/],
      [{ ...sentinelEnv, REDIS_CLUSTER_NODES: '127.0.0.1:7000' }, 'REDIS_CLUSTER_NODES', /REDIS_SENTINELS and REDIS_CLUSTER_NODES/],
      [{ REDIS_SENTINELS: '127.0.0.1:26379' }, 'REDIS_SENTINEL_NAME', /required with REDIS_SENTINELS/],
      [{ REDIS_SENTINEL_NAME: 'mymaster' }, 'REDIS_SENTINEL_NAME', /only with REDIS_SENTINELS/],
      [{ REDIS_CLUSTER_NODES: '127.0.0.1:7000', REDIS_SENTINEL_PASSWORD: SENTINEL_PASSWORD }, 'REDIS_SENTINEL_PASSWORD', /only with REDIS_SENTINELS/],
      [{ REDIS_URL: 'redis://127.0.0.1:6379', REDIS_PASSWORD: DATA_PASSWORD }, 'REDIS_PASSWORD', /REDIS_URL, which carries its own password/],
      [{ REDIS_PASSWORD: DATA_PASSWORD }, 'REDIS_PASSWORD', /only with REDIS_SENTINELS or REDIS_CLUSTER_NODES/],
      [{ ...sentinelEnv, REDIS_SENTINELS: '10.0.0.1' }, 'REDIS_SENTINELS', /"10.0.0.1" is not host:port/],
      [{ ...sentinelEnv, REDIS_SENTINELS: '10.0.0.1:99999' }, 'REDIS_SENTINELS', /is not host:port/],
      [{ REDIS_CLUSTER_NODES: '127.0.0.1:7000,nonsense' }, 'REDIS_CLUSTER_NODES', /"nonsense" is not host:port/],
      [{ REDIS_REPLICA_ACKS: '1' }, 'REDIS_REPLICA_ACKS', /embedded redis-server has no replica/],
      [
        { ...sentinelEnv, REDIS_REPLICA_ACKS: '1', REDIS_REPLICA_ACK_TIMEOUT_MS: '2000' },
        'REDIS_REPLICA_ACK_TIMEOUT_MS',
        /shorter than REDIS_COMMAND_TIMEOUT_MS/,
      ],
      [{ ...sentinelEnv, REDIS_REPLICA_ACKS: '1', MESSAGE_REDIS_TIMEOUT_MS: '150' }, 'REDIS_REPLICA_ACK_TIMEOUT_MS', /shorter than MESSAGE_REDIS_TIMEOUT_MS/],
    ];
    for (const [env, variable, message] of cases) {
      const err = refusal(env);
      expect(err, JSON.stringify(env)).toBeInstanceOf(ConfigError);
      expect(err!.variable, err!.message).toBe(variable);
      expect(err!.message).toMatch(message);
      expect(err!.message).not.toContain(DATA_PASSWORD);
      expect(err!.message).not.toContain(SENTINEL_PASSWORD);
    }
    // Consistent combinations load.
    expect(refusal({ ...sentinelEnv, REDIS_REPLICA_ACKS: '1' })).toBeUndefined();
    expect(refusal({ REDIS_URL: 'redis://:secret@10.0.0.5:6379', REDIS_REPLICA_ACKS: '2' })).toBeUndefined();
    expect(refusal({ REDIS_CLUSTER_NODES: '127.0.0.1:7000', REDIS_REPLICA_ACKS: '1', REDIS_REPLICA_ACK_TIMEOUT_MS: '50' })).toBeUndefined();
  });

  it('never shows a password: the logged configuration masks them, a target is described without them', () => {
    const config = loadConfig(sentinelEnv);
    const logged = JSON.stringify(describeConfig(config));
    expect(logged).not.toContain(DATA_PASSWORD);
    expect(logged).not.toContain(SENTINEL_PASSWORD);
    expect(describeConfig(config).redis).toMatchObject({ password: '<hidden>', sentinelPassword: '<hidden>', sentinelName: 'mymaster' });
    const target = configuredRedis(config)!;
    expect(describeTarget(target)).toBe('master "mymaster" of the sentinels 10.0.0.1:26379,10.0.0.2:26379,[::1]:26380');
    expect(describeTarget({ kind: 'single', url: `redis://:${DATA_PASSWORD}@10.0.0.5:6379/2` })).toBe('redis://10.0.0.5:6379/2');
    expect(describeTarget({ kind: 'cluster', nodes: [{ host: '10.0.0.7', port: 7000 }], password: DATA_PASSWORD })).toBe('Redis Cluster 10.0.0.7:7000');
  });

  it('parses host:port lists, IPv6 in brackets', () => {
    expect(parseHostPorts('X', 'a:1,b:2')).toEqual([
      { host: 'a', port: 1 },
      { host: 'b', port: 2 },
    ]);
    expect(parseHostPorts('X', ' [fe80::1]:26379 ')).toEqual([{ host: 'fe80::1', port: 26379 }]);
    expect(() => parseHostPorts('X', ',')).toThrow(/^X: no host:port given/);
    expect(() => parseHostPorts('X', 'a:0')).toThrow(/"a:0" is not host:port/);
    expect(() => parseHostPorts('X', 'fe80::1:26379')).toThrow(/is not host:port/);
  });
});
