/**
 * The message cache's own Redis connections (MESSAGE_REDIS_POOL_SIZE, with their own connect and
 * command timeouts; reference 4.4). A session always uses the same connection, so the commands
 * of one process for one session reach Redis in the order they were issued.
 */
import { FirstConnect } from '../redis/first-connect.js';
import type { RedisClient } from '../redis/connection.js';
import { sessionHash } from './session-hash.js';

export class MessageConnections {
  /** The first connect of each connection (a new process's). */
  private readonly firstConnects: FirstConnect[];

  constructor(
    private readonly clients: RedisClient[],
    firstConnectTimeoutMs: number,
  ) {
    if (clients.length === 0) throw new Error('MessageConnections needs at least one Redis connection');
    this.firstConnects = clients.map((client) => new FirstConnect(client, firstConnectTimeoutMs));
  }

  /**
   * The session's connection. One that is still making its first connection (a process that just
   * started) is waited for; after that a connection that is down fails commands at once. No
   * promise on the usual path, so the caller writes its command in the same step.
   */
  forSession(sessionId: string): RedisClient | Promise<RedisClient> {
    const i = this.clients.length === 1 ? 0 : sessionHash(sessionId) % this.clients.length;
    const client = this.clients[i]!;
    const first = this.firstConnects[i]!.whenReady();
    return first ? first.then(() => client) : client;
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
