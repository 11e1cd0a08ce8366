/**
 * The message cache's own Redis connections (MESSAGE_REDIS_POOL_SIZE, with their own connect and
 * command timeouts; reference 4.4). A session always uses the same connection, so the commands
 * of one process for one session reach Redis in the order they were issued.
 */
import { waitForReady, type RedisClient } from '../redis/connection.js';
import { sessionHash } from './session-hash.js';

export class MessageConnections {
  /** Connections that have not been ready yet (first connect of a new process). */
  private readonly connecting = new Map<RedisClient, Promise<void>>();

  constructor(
    private readonly clients: RedisClient[],
    firstConnectTimeoutMs: number,
  ) {
    if (clients.length === 0) throw new Error('MessageConnections needs at least one Redis connection');
    for (const client of clients) {
      if (client.status === 'ready') continue;
      const first = waitForReady(client, firstConnectTimeoutMs).finally(() => this.connecting.delete(client));
      first.catch(() => undefined);
      this.connecting.set(client, first);
    }
  }

  /**
   * The session's connection. One that is still making its first connection (a process that just
   * started) is waited for; after that a connection that is down fails commands at once. No
   * promise on the usual path, so the caller writes its command in the same step.
   */
  forSession(sessionId: string): RedisClient | Promise<RedisClient> {
    const client = this.clients.length === 1 ? this.clients[0]! : this.clients[sessionHash(sessionId) % this.clients.length]!;
    const first = this.connecting.get(client);
    return first ? first.then(() => client, () => client) : client;
  }

  /** True once the connections were closed (the process is shutting down). */
  get closed(): boolean {
    return this.clients.every((c) => c.status === 'end');
  }
}

/** Runs `command` on the session's connection: at once when it is ready, else once it is. */
export function onSessionConnection<T>(connections: MessageConnections, sessionId: string, command: (client: RedisClient) => Promise<T>): Promise<T> {
  const client = connections.forSession(sessionId);
  return client instanceof Promise ? client.then(command) : command(client);
}
