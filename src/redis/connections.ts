import type { Logger } from '../logging/logger.js';
import type { RedisTarget } from '../services/provide-services.js';
import { closeRedis, createRedisClient, type ConnectionKind, type RedisClient, type RedisConnectionOptions } from './connection.js';

/**
 * Makes and owns a process's Redis connections, so that shutdown closes every one of them and
 * connection errors are logged once per outage instead of once per retry.
 */
export class RedisConnections {
  private readonly clients = new Set<RedisClient>();
  private closing: Promise<void> | undefined;

  constructor(
    readonly target: RedisTarget,
    readonly options: RedisConnectionOptions,
    private readonly logger: Logger,
  ) {}

  /** A new connection; `overrides` replace this process's default timeouts for it (a domain's own client settings). */
  create(kind: ConnectionKind, name: string, overrides: Partial<RedisConnectionOptions> = {}): RedisClient {
    const client = createRedisClient(this.target, kind, { ...this.options, ...overrides }, name);
    let down = false;
    client.on('error', (err: Error) => {
      if (!down) this.logger.warn({ connection: name, err: err.message }, 'redis connection error; reconnecting');
      down = true;
    });
    client.on('ready', () => {
      if (down) this.logger.info({ connection: name }, 'redis connection restored');
      down = false;
    });
    this.clients.add(client);
    return client;
  }

  /** Closes every connection made here. Idempotent. */
  close(): Promise<void> {
    return (this.closing ??= Promise.all([...this.clients].map(closeRedis)).then(() => undefined));
  }
}
