/**
 * The first connect of a Redis connection made while its process starts. A connection without an
 * offline queue fails a command sent before it is ready, so a process that just started would
 * fail its first requests; until the connection has been ready once (or `timeoutMs` passed),
 * commands wait for it. After that a connection that is down fails them at once, as it should.
 *
 * `whenReady()` is undefined once the first connect is over (or when the connection was ready
 * from the start), so the usual path costs no promise and the caller sends its command in the
 * same step.
 */
import { waitForReady, type RedisClient } from './connection.js';

export class FirstConnect {
  private pending: Promise<void> | undefined;

  constructor(client: RedisClient, timeoutMs: number) {
    if (client.status === 'ready') return;
    // A first connect that times out is over too: the commands then fail (or not) on their own.
    this.pending = waitForReady(client, timeoutMs)
      .catch(() => undefined)
      .finally(() => (this.pending = undefined));
  }

  /** Pending while the first connect is; it never rejects. */
  whenReady(): Promise<void> | undefined {
    return this.pending;
  }

  /** Runs `command` now when the first connect is over, else once it is. */
  run<T>(command: () => Promise<T>): Promise<T> {
    return this.pending ? this.pending.then(command) : command();
  }
}
