/**
 * The proxy circuit breaker (reference 3.7), shared by every crawler process through one Redis
 * hash: which PROXY_LIST entry is in use, the consecutive failures on it, and the cool-down.
 *
 *   closed (counting) ──failures ≥ threshold, not cooling down──▶ switching (one process holds
 *   the switch lease and health-checks the next proxies in list order)
 *     switching ──a healthy proxy──▶ switched: index moves, failures reset, cool-down starts
 *     switching ──none healthy────▶ closed; no new attempt for NO_HEALTHY_RETRY_MS
 *
 * Blocked, timeout and network page failures count; a successful page resets the count;
 * unknown failures are neutral. During the cool-down failures keep counting but no switch
 * happens. Every process reads the index before each page and recycles (drains) its browser
 * when it changed, so a switch made by one process moves them all.
 *
 * Hash fields: list (fingerprint of PROXY_LIST: a different list resets the state), index,
 * failures, cooldownUntil, switchingUntil, switchedAt (ms), switches.
 */
import { createHash } from 'node:crypto';
import type { Logger } from '../logging/logger.js';
import type { RedisClient } from '../redis/connection.js';
import { RedisScript } from '../redis/script.js';
import type { ProxyConfig } from './proxy-url.js';
import { toError } from '../errors.js';

/** After a sweep found no healthy proxy, the next sweep waits this long. */
export const NO_HEALTHY_RETRY_MS = 60_000;

const RECORD_FAILURE = RedisScript.load('crawl-proxy-record-failure', new URL('./crawl-proxy-record-failure.lua', import.meta.url), {
  keys: ['breaker'],
  args: ['fingerprint', 'threshold', 'nowMs', 'leaseMs', 'canSwitch'],
});

const COMMIT_SWITCH = RedisScript.load('crawl-proxy-commit-switch', new URL('./crawl-proxy-commit-switch.lua', import.meta.url), {
  keys: ['breaker'],
  args: ['fingerprint', 'from', 'to', 'nowMs', 'cooldownMs'],
});

export interface BreakerState {
  index: number;
  failures: number;
  cooldownUntil: number;
  switchedAt: number | null;
  switches: number;
}

export interface ProxyBreakerOptions {
  redis: RedisClient;
  key: string;
  proxies: ProxyConfig[];
  threshold: number;
  cooldownMs: number;
  healthCheckTimeoutMs: number;
  healthCheck: (proxy: ProxyConfig) => Promise<{ healthy: boolean; detail: string }>;
  logger: Logger;
  onSwitch?: (from: ProxyConfig, to: ProxyConfig) => void;
  onFailures?: (failures: number) => void;
  now?: () => number;
}

export class ProxyBreaker {
  private readonly fingerprint: string;
  private lastIndex = 0;
  private readonly now: () => number;

  constructor(private readonly options: ProxyBreakerOptions) {
    this.fingerprint = createHash('sha1')
      .update(options.proxies.map((p) => p.server).join('\n'))
      .digest('hex')
      .slice(0, 16);
    this.now = options.now ?? Date.now;
  }

  /** The proxy pages should use now; null = direct (PROXY_LIST is empty). */
  async current(): Promise<ProxyConfig | null> {
    const { proxies, redis, key } = this.options;
    if (proxies.length === 0) return null;
    if (proxies.length > 1) {
      try {
        const [list, index] = await redis.hmget(key, 'list', 'index');
        this.lastIndex = list === this.fingerprint ? Number(index ?? 0) % proxies.length : 0;
      } catch (err) {
        this.options.logger.warn({ err: toError(err).message }, 'proxy breaker state unreadable; keeping the last known proxy');
      }
    }
    return proxies[this.lastIndex] ?? proxies[0]!;
  }

  async recordSuccess(): Promise<void> {
    try {
      await this.options.redis.hset(this.options.key, 'failures', 0);
      this.options.onFailures?.(0);
    } catch (err) {
      this.options.logger.warn({ err: toError(err).message }, 'proxy breaker: could not record a success');
    }
  }

  /**
   * Counts a failure that says something about the proxy. When it trips the breaker, this
   * call health-checks the candidates and switches before it returns.
   */
  async recordFailure(): Promise<{ failures: number; switchedTo?: ProxyConfig }> {
    const { proxies, redis, key, threshold } = this.options;
    const leaseMs = Math.max(1, proxies.length - 1) * this.options.healthCheckTimeoutMs + 5_000;
    let failures: number;
    let mustSwitch: number;
    try {
      [failures, mustSwitch] = await RECORD_FAILURE.run<[number, number]>(
        redis,
        { breaker: key },
        { fingerprint: this.fingerprint, threshold, nowMs: this.now(), leaseMs, canSwitch: proxies.length > 1 },
      );
    } catch (err) {
      this.options.logger.warn({ err: toError(err).message }, 'proxy breaker: could not record a failure');
      return { failures: 0 };
    }
    this.options.onFailures?.(failures);
    if (!mustSwitch) return { failures };
    const switchedTo = await this.switchProxy().catch((err: Error) => {
      this.options.logger.error({ err: err.message }, 'proxy breaker: switch failed');
      return undefined;
    });
    return switchedTo ? { failures, switchedTo } : { failures };
  }

  async state(): Promise<BreakerState> {
    const h = await this.options.redis.hgetall(this.options.key);
    const fresh = h.list === this.fingerprint;
    return {
      index: fresh ? Number(h.index ?? 0) : 0,
      failures: fresh ? Number(h.failures ?? 0) : 0,
      cooldownUntil: fresh ? Number(h.cooldownUntil ?? 0) : 0,
      switchedAt: fresh && h.switchedAt ? Number(h.switchedAt) : null,
      switches: fresh ? Number(h.switches ?? 0) : 0,
    };
  }

  private async switchProxy(): Promise<ProxyConfig | undefined> {
    const { proxies, redis, key, logger } = this.options;
    const from = (await this.state()).index;
    const fromProxy = proxies[from]!;
    for (let step = 1; step < proxies.length; step++) {
      const candidate = proxies[(from + step) % proxies.length]!;
      const check = await this.options.healthCheck(candidate);
      logger.info({ proxy: candidate.label, healthy: check.healthy, detail: check.detail }, 'proxy health check');
      if (!check.healthy) continue;
      const switched = await COMMIT_SWITCH.run<number>(
        redis,
        { breaker: key },
        { fingerprint: this.fingerprint, from, to: candidate.index, nowMs: this.now(), cooldownMs: this.options.cooldownMs },
      );
      if (!switched) return undefined;
      this.lastIndex = candidate.index;
      logger.warn({ from: fromProxy.label, to: candidate.label, cooldownMs: this.options.cooldownMs }, 'proxy switched by the circuit breaker');
      this.options.onSwitch?.(fromProxy, candidate);
      return candidate;
    }
    await redis.hset(key, 'switchingUntil', this.now() + NO_HEALTHY_RETRY_MS);
    logger.error({ current: fromProxy.label }, 'proxy breaker tripped but no other proxy is healthy; staying');
    return undefined;
  }
}
