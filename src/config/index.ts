import os from 'node:os';
import path from 'node:path';
import { authSettings, EXAMPLE_ADMIN_PASSWORD, EXAMPLE_JWT_SECRET } from './auth.js';
import { clusterSettings } from './cluster.js';
import { crawlSettings } from './crawl.js';
import type { GroupValue, SettingGroup } from './define.js';
import { feedSettings } from './feeds.js';
import { messageSettings } from './messages.js';
import { outboundSettings } from './outbound.js';
import { pipelineSettings } from './pipeline.js';
import { coreSettings, databaseSettings, httpSettings, queueSettings, redisSettings } from './platform.js';
import { poolSettings } from './pools.js';
import { tracingSettings } from './tracing.js';
import { weakSecretReason } from './secret-strength.js';
import { parseShardSpec } from '../queues/partitions.js';
import { redisSettingsProblem } from './redis-settings-check.js';

/**
 * The one configuration schema. Each group is one file beside this one; every setting has its
 * environment variable, default and doc line there. `loadConfig` parses the environment once;
 * the result is passed down explicitly, never read from a global.
 */
export const settingGroups = {
  core: coreSettings,
  http: httpSettings,
  redis: redisSettings,
  database: databaseSettings,
  queues: queueSettings,
  auth: authSettings,
  outbound: outboundSettings,
  feeds: feedSettings,
  crawl: crawlSettings,
  pipeline: pipelineSettings,
  pools: poolSettings,
  messages: messageSettings,
  cluster: clusterSettings,
  tracing: tracingSettings,
} satisfies Record<string, SettingGroup>;

type Groups = typeof settingGroups;
export type Config = { [G in keyof Groups]: GroupValue<Groups[G]> } & {
  /** Resolved facts derived from the settings. */
  derived: { instanceId: string; dataDir: string; embeddedRedis: boolean; embeddedDatabase: boolean };
};

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
  }
}

/** Parses settings from an environment (default: process.env). Throws ConfigError naming the variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const out: Record<string, Record<string, unknown>> = {};
  for (const [groupName, group] of Object.entries(settingGroups) as [string, SettingGroup][]) {
    const values: Record<string, unknown> = {};
    for (const [key, s] of Object.entries(group)) {
      const raw = env[s.env];
      const input = raw === undefined || raw === '' ? s.example : raw;
      const parsed = s.schema.safeParse(input);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw new ConfigError(s.env, `${issue?.message ?? 'invalid value'} (got ${s.secret ? '<hidden>' : JSON.stringify(raw)})`);
      }
      values[key] = parsed.data;
    }
    out[groupName] = values;
  }
  const config = out as unknown as Config;
  if (config.pipeline.minIntervalSeconds > config.pipeline.maxIntervalSeconds) {
    throw new ConfigError('SCHEDULER_MIN_INTERVAL', 'must not exceed SCHEDULER_MAX_INTERVAL');
  }
  if (config.pools.refillThreshold > config.pools.size) {
    throw new ConfigError('POOL_REFILL_THRESHOLD', 'must not exceed POOL_SIZE');
  }
  if (config.feeds.lockTtlSeconds <= config.feeds.timeLimitSeconds) {
    throw new ConfigError('FEED_LOCK_TTL_SECONDS', 'must be longer than FEED_TIME_LIMIT_SECONDS');
  }
  try {
    parseShardSpec(config.queues.workerShards, config.queues.shards);
  } catch (err) {
    throw new ConfigError('WORKER_SHARDS', (err as Error).message);
  }
  if (config.database.queryTimeoutMs && config.database.statementTimeoutMs && config.database.queryTimeoutMs <= config.database.statementTimeoutMs) {
    // The server's statement timeout must fire first: a query it cancels is a refused statement,
    // one the client gives up on is an outage (and a job meeting it waits instead of failing).
    throw new ConfigError('DATABASE_QUERY_TIMEOUT_MS', 'must exceed DATABASE_STATEMENT_TIMEOUT_MS (or be 0)');
  }
  if (config.http.headersTimeoutMs > config.http.receiveTimeoutMs) {
    throw new ConfigError('HTTP_HEADERS_TIMEOUT_MS', 'must not exceed HTTP_RECEIVE_TIMEOUT_MS');
  }
  if (config.http.trustedProxies.length && config.http.trustProxy > 1) {
    throw new ConfigError('HTTP_TRUST_PROXY', 'a hop count and HTTP_TRUSTED_PROXIES are both set: use one of them (HTTP_TRUSTED_PROXIES preferred)');
  }
  const redisProblem = redisSettingsProblem(config);
  if (redisProblem) throw new ConfigError(redisProblem.variable, redisProblem.message);
  config.derived = {
    instanceId: config.core.instanceId ?? `${os.hostname()}-${process.pid}`,
    dataDir: path.resolve(config.core.dataDir),
    embeddedRedis: !config.redis.url && !config.redis.clusterNodes && !config.redis.sentinels,
    embeddedDatabase: !config.database.url,
  };
  return config;
}

/** The shortest ADMIN_PASSWORD production accepts. */
export const MIN_PRODUCTION_ADMIN_PASSWORD = 12;

/**
 * Refuses example and weak secrets in production: JWT_SECRET must be at least 32 random-looking
 * bytes (secret-strength.ts), ADMIN_PASSWORD at least 12 characters.
 */
export function assertProductionSafe(config: Config): void {
  if (config.core.nodeEnv !== 'production') return;
  if (config.auth.jwtSecret === EXAMPLE_JWT_SECRET) {
    throw new ConfigError('JWT_SECRET', 'the example secret is refused when NODE_ENV=production');
  }
  const weak = weakSecretReason(config.auth.jwtSecret);
  if (weak) throw new ConfigError('JWT_SECRET', `${weak} when NODE_ENV=production`);
  if (config.auth.adminPassword === EXAMPLE_ADMIN_PASSWORD) {
    throw new ConfigError('ADMIN_PASSWORD', 'the example password is refused when NODE_ENV=production');
  }
  if ([...config.auth.adminPassword].length < MIN_PRODUCTION_ADMIN_PASSWORD) {
    throw new ConfigError('ADMIN_PASSWORD', `must be at least ${MIN_PRODUCTION_ADMIN_PASSWORD} characters when NODE_ENV=production`);
  }
}

/** Every setting with its env name, for `.env.example` and docs/configuration.md. */
export function listSettings(): { group: string; key: string; env: string; example: string | undefined; doc: string; secret: boolean }[] {
  return Object.entries(settingGroups).flatMap(([group, settings]) =>
    Object.entries(settings as SettingGroup).map(([key, s]) => ({
      group,
      key,
      env: s.env,
      example: s.example,
      doc: s.doc,
      secret: s.secret ?? false,
    })),
  );
}

/** The text of `docs/configuration.md`, generated from the schema (`npm run config:example`). */
export function renderConfigDoc(): string {
  const cell = (v: string) => v.replace(/\|/g, '\\|').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const lines = [
    '# Configuration',
    '',
    'Every setting is an environment variable (or a line in `.env`, which `npm start` and every',
    'process read from the working directory; real environment variables win). This page and',
    '[`.env.example`](../.env.example) are generated from the one typed schema in `src/config/`',
    '(`npm run config:example`); a test keeps all three in step. An invalid value stops the process',
    'with a message naming the variable; secrets are never logged (they show as `<hidden>`).',
  ];
  let lastGroup = '';
  for (const s of listSettings()) {
    if (s.group !== lastGroup) {
      lines.push('', `## ${s.group}`, '', '| variable | default | what |', '|---|---|---|');
      lastGroup = s.group;
    }
    const shown =
      s.example === undefined ? 'unset' : s.secret ? `\`${cell(s.example)}\` (example; set your own)` : s.example === '' ? 'empty' : `\`${cell(s.example)}\``;
    lines.push(`| \`${s.env}\` | ${shown} | ${cell(s.doc)} |`);
  }
  return lines.join('\n') + '\n';
}

/** The text of `.env.example`, generated from the schema (`npm run config:example`). */
export function renderEnvExample(): string {
  const lines = [
    '# Every setting of the platform, with its default. Copy to .env and change what you need.',
    '# Generated from src/config/*.ts by `npm run config:example`; a test keeps the two in step.',
  ];
  let lastGroup = '';
  for (const s of listSettings()) {
    if (s.group !== lastGroup) {
      lines.push('', `# --- ${s.group} ---`);
      lastGroup = s.group;
    }
    lines.push(`# ${s.doc}`);
    lines.push(s.example === undefined ? `# ${s.env}=` : `${s.env}=${s.example}`);
  }
  return lines.join('\n') + '\n';
}

/** The configuration as it may be logged: secrets masked. */
export function describeConfig(config: Config): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const [group, settings] of Object.entries(settingGroups) as [string, SettingGroup][]) {
    const values = (config as unknown as Record<string, Record<string, unknown>>)[group] ?? {};
    out[group] = Object.fromEntries(Object.entries(settings).map(([key, s]) => [key, s.secret && values[key] !== undefined ? '<hidden>' : values[key]]));
  }
  return out;
}
