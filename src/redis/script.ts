import { createHash } from 'node:crypto';
import type { RedisClient } from './connection.js';

/**
 * A Lua script run by EVALSHA, loaded on first NOSCRIPT (after a Redis restart too).
 * Every script's source starts with a comment listing its KEYS and ARGV.
 */
export class RedisScript {
  readonly sha: string;

  constructor(
    readonly name: string,
    readonly source: string,
  ) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  async run<T = unknown>(client: RedisClient, keys: string[], args: (string | number)[] = []): Promise<T> {
    try {
      return (await client.evalsha(this.sha, keys.length, ...keys, ...args)) as T;
    } catch (err) {
      if (!(err instanceof Error) || !err.message.includes('NOSCRIPT')) throw err;
      return (await client.eval(this.source, keys.length, ...keys, ...args)) as T;
    }
  }
}
