/**
 * A Redis older than 6.2 (no LMOVE, no RPOP with a count: every pool pop would fail) is refused
 * at start, naming its version and the one needed, before any role runs. No Redis 6.0 is at hand
 * on these machines, so a loopback server speaks for one: it answers INFO as Redis 6.0.16 does
 * and every other command with OK, and records the commands it got.
 *
 * A Redis that evicts keys under memory pressure (maxmemory-policy other than noeviction) is
 * served, with a warning in the log naming the policy.
 */
import { createServer, type Server } from 'node:net';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startTestRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';
import { adminClient, removeDataDir, startProduct } from './support/product.js';

/** The words of each RESP command array in `buffer`, and the bytes not yet a whole command. */
function readCommands(buffer: string): { commands: string[][]; rest: string } {
  const commands: string[][] = [];
  let at = 0;
  for (;;) {
    const start = at;
    const header = /^\*(\d+)\r\n/.exec(buffer.slice(at));
    if (!header) return { commands, rest: buffer.slice(start) };
    at += header[0].length;
    const words: string[] = [];
    for (let i = 0; i < Number(header[1]); i++) {
      const bulk = /^\$(\d+)\r\n/.exec(buffer.slice(at));
      if (!bulk || buffer.length < at + bulk[0].length + Number(bulk[1]) + 2) return { commands, rest: buffer.slice(start) };
      at += bulk[0].length;
      words.push(buffer.slice(at, at + Number(bulk[1])));
      at += Number(bulk[1]) + 2;
    }
    commands.push(words);
  }
}

const INFO_6_0 = '# Server\r\nredis_version:6.0.16\r\nredis_mode:standalone\r\n\r\n# Persistence\r\nloading:0\r\n';

describe('npm start against a Redis older than 6.2', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'wp-e2e-redis-version-'));
  const received: string[] = [];
  let oldRedis: Server;
  let port = 0;
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
    oldRedis = createServer((socket) => {
      let pending = '';
      socket.setEncoding('latin1');
      socket.on('error', () => undefined);
      socket.on('data', (chunk: string) => {
        const { commands, rest } = readCommands(pending + chunk);
        pending = rest;
        for (const words of commands) {
          const name = words[0]!.toLowerCase();
          received.push(name);
          socket.write(name === 'info' ? `$${Buffer.byteLength(INFO_6_0, 'latin1')}\r\n${INFO_6_0}\r\n` : '+OK\r\n');
        }
      });
    });
    await new Promise<void>((resolve) => oldRedis.listen(0, '127.0.0.1', resolve));
    port = (oldRedis.address() as { port: number }).port;
  });

  afterAll(async () => {
    await new Promise((resolve) => oldRedis.close(resolve));
    await database.drop();
    await removeDataDir(dataDir);
  });

  it('refuses to start, naming the version it found and the one it needs, and runs no pool command', async () => {
    const failed = await startProduct({
      dataDir,
      port: 0,
      env: { REDIS_URL: `redis://127.0.0.1:${port}`, DATABASE_URL: database.url },
      startTimeoutMs: 60_000,
    }).then(
      () => 'started',
      (err: Error) => err.message,
    );
    expect(failed).toContain('did not start');
    expect(failed).toMatch(/Redis 6\.0\.16 at redis:\/\/127\.0\.0\.1:\d+ is too old: the platform needs Redis 6\.2\.0 or later/);
    expect(received).toContain('info');
    // Refused before any role ran: no script, no list command, no queue was touched.
    expect(received.filter((c) => /^(evalsha|eval|lmove|rpop|lpush|bzpopmin|xadd)$/.test(c))).toEqual([]);
  }, 90_000);
});

describe('npm start against a Redis that evicts keys', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'wp-e2e-redis-evicts-'));
  afterAll(() => removeDataDir(dataDir));

  it('starts and serves, and warns in its log that keys can be lost, naming the policy', async () => {
    const redis = await startTestRedis({ extraArgs: ['--maxmemory-policy', 'allkeys-lru'] });
    const database = await createTestDatabase();
    try {
      const platform = await startProduct({ dataDir, port: 0, env: { REDIS_URL: redis.url, DATABASE_URL: database.url } });
      try {
        const warning = await waitFor(() => platform.lines().find((l) => l.level === 40 && l.maxmemoryPolicy === 'allkeys-lru'), {
          message: 'the eviction policy warning',
        });
        expect(warning.msg).toContain('set maxmemory-policy noeviction');
        // Served all the same: a user logs in and reads the pools.
        const api = await adminClient(platform.url!);
        expect((await api.request('GET', '/api/pools')).status).toBe(200);
      } finally {
        expect((await platform.stop()).clean).toBe(true);
      }
    } finally {
      await database.drop();
      await redis.destroy();
    }
  }, 120_000);
});
