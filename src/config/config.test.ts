import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigError, assertProductionSafe, listSettings, loadConfig, renderConfigDoc, renderEnvExample } from './index.js';

describe('config', () => {
  it('docs/configuration.md documents every setting, as generated from the schema', () => {
    const committed = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
    expect(committed).toBe(renderConfigDoc());
    for (const s of listSettings()) expect(committed).toContain(`| \`${s.env}\` |`);
  });

  it('.env.example lists every setting with its default, as generated from the schema', () => {
    const committed = readFileSync(new URL('../../.env.example', import.meta.url), 'utf8');
    expect(committed).toBe(renderEnvExample());
    for (const s of listSettings()) expect(committed).toMatch(new RegExp(`^#? ?${s.env}=`, 'm'));
  });

  it('parses the defaults of the reference designs', () => {
    const c = loadConfig({});
    expect(c.http.port).toBe(3000);
    expect(c.http.host).toBe('127.0.0.1');
    expect(c.queues.attempts).toBe(3);
    expect(c.pools.size).toBe(5000);
    expect(c.pools.refillThreshold).toBe(1000);
    expect(c.pools.refillBatch).toBe(500);
    expect(c.pipeline.baseIntervalSeconds).toBe(7200);
    expect(c.pipeline.minIntervalSeconds).toBe(3600);
    expect(c.feeds.lockTtlSeconds).toBe(180);
    expect(c.feeds.domainMinIntervalMs).toBe(1000);
    expect(c.cluster.leaderTtlMs).toBe(60000);
    expect(c.messages.cacheMaxLen).toBe(200);
    expect(c.derived.embeddedRedis).toBe(true);
    expect(c.derived.embeddedDatabase).toBe(true);
  });

  it('stops on an invalid value, naming the variable', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(ConfigError);
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/^PORT: /);
    expect(() => loadConfig({ JOB_ATTEMPTS: '0' })).toThrow(/^JOB_ATTEMPTS: /);
    expect(() => loadConfig({ AUTH_FAIL_OPEN: 'maybe' })).toThrow(/^AUTH_FAIL_OPEN: /);
    expect(() => loadConfig({ OUTBOUND_ALLOW: '10.0.0.0/8,http://intranet' })).toThrow(/^OUTBOUND_ALLOW: "http:\/\/intranet" is neither/);
    expect(loadConfig({ OUTBOUND_ALLOW: ' 127.0.0.0/8, ::1 ,feeds.intranet' }).outbound.allow).toEqual(['127.0.0.0/8', '::1', 'feeds.intranet']);
    expect(() => loadConfig({ SCHEDULER_MIN_INTERVAL: '9000' })).toThrow(/^SCHEDULER_MIN_INTERVAL: /);
    expect(() => loadConfig({ QUEUE_SHARDS: '6', WORKER_SHARDS: '0-6' })).toThrow(/^WORKER_SHARDS: partition 6 does not exist \(QUEUE_SHARDS is 6: 0-5\)/);
    expect(() => loadConfig({ QUEUE_SHARDS: '6', WORKER_SHARDS: 'first' })).toThrow(/^WORKER_SHARDS: "first" is not a partition/);
    expect(() => loadConfig({ QUEUE_SHARDS: '0' })).toThrow(/^QUEUE_SHARDS: /);
    expect(loadConfig({ QUEUE_SHARDS: '6', WORKER_SHARDS: '0-2,5' }).queues).toMatchObject({ shards: 6, workerShards: '0-2,5' });
  });

  it('never echoes a secret in an error', () => {
    expect(() => loadConfig({ JWT_SECRET: 'short-secret' })).toThrow(/JWT_SECRET: .*<hidden>/);
    expect(() => loadConfig({ JWT_SECRET: 'short-secret' })).not.toThrow(/short-secret/);
  });

  it('refuses the example secrets, a secret that does not look random and a short admin password in production', () => {
    const secret = 'R2vX9q0ZpLk3mN7tB5wY1cF8hJ4sD6gA0eU2iO9xQ3';
    expect(() => assertProductionSafe(loadConfig({ NODE_ENV: 'production' }))).toThrow(/JWT_SECRET/);
    expect(() => assertProductionSafe(loadConfig({ NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(40), ADMIN_PASSWORD: 'a-real-password' }))).toThrow(
      /^JWT_SECRET: does not look random/,
    );
    expect(() => assertProductionSafe(loadConfig({ NODE_ENV: 'production', JWT_SECRET: secret }))).toThrow(/ADMIN_PASSWORD/);
    expect(() => assertProductionSafe(loadConfig({ NODE_ENV: 'production', JWT_SECRET: secret, ADMIN_PASSWORD: 'x' }))).toThrow(
      /^ADMIN_PASSWORD: must be at least 12/,
    );
    expect(() => assertProductionSafe(loadConfig({ NODE_ENV: 'production', JWT_SECRET: secret, ADMIN_PASSWORD: 'eleven-char' }))).toThrow(/ADMIN_PASSWORD/);
    expect(() => assertProductionSafe(loadConfig({ NODE_ENV: 'production', JWT_SECRET: secret, ADMIN_PASSWORD: 'a-real-password' }))).not.toThrow();
    // Outside production the examples are fine.
    expect(() => assertProductionSafe(loadConfig({ NODE_ENV: 'development', ADMIN_PASSWORD: 'x' }))).not.toThrow();
  });
});
