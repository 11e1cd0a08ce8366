/**
 * Issue 26, invariant 12: a flood of connections that send nothing, or the start of a request and
 * never its end, does not take the API from others. The api role in a process of its own with an
 * open-file limit of 2,048 (so that a test-sized flood would exhaust it; bench/connections.ts
 * floods 20,000 against the default limit) and the default connection settings, which cap it at
 * 2,048 - HTTP_FD_RESERVE (1,024) connections, 256 per address:
 *
 * - 3,000 idle connections from the checker's own address (127.0.0.1): the address is held at its
 *   cap and /healthz from it is answered;
 * - 3,000 slow-header connections from 60 other loopback addresses, over the total cap: /healthz
 *   is answered, and HTTP_HEADERS_TIMEOUT_MS (10 s) closes them (408), not node's 60-90 s;
 * - the connections closed or refused over a cap are counted in /metrics.
 *
 * Before the caps, the flood took every file descriptor and every new request, /healthz included,
 * failed until node's header timeout closed the connections.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flood, healthzSeries, loopbackAddresses, summarize } from '../support/connection-flood.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { TEST_ADMIN, testEnv } from '../support/env.js';
import { ApiClient } from '../support/http-client.js';
import { spawnPlatform, type PlatformProcess } from '../support/processes.js';
import { startTestRedis, type TestRedis } from '../support/redis.js';
import { waitFor } from '../support/wait.js';

const OPEN_FILES = 2048;
/** The defaults: HTTP_MAX_CONNECTIONS under the open-file limit less HTTP_FD_RESERVE, and HTTP_MAX_CONNECTIONS_PER_ADDRESS. */
const CAP = OPEN_FILES - 1024;
const PER_ADDRESS = 256;
const FLOOD = 3000;

describe('connection limits of the API', () => {
  let redis: TestRedis;
  let db: TestDatabase;
  let proc: PlatformProcess;
  let api: ApiClient;
  let port: number;
  const figures: string[] = [];

  beforeAll(async () => {
    redis = await startTestRedis();
    db = await createTestDatabase();
    proc = await spawnPlatform('api', testEnv(redis, db, { LOG_LEVEL: 'warn' }), { openFiles: OPEN_FILES });
    api = new ApiClient(proc.apiUrl!);
    await api.login(TEST_ADMIN.username, TEST_ADMIN.password);
    port = Number(new URL(proc.apiUrl!).port);
  });
  afterAll(async () => {
    console.log(`/healthz under connection floods (open-file limit ${OPEN_FILES}):\n  ${figures.join('\n  ')}`);
    await proc?.stop();
    await redis?.destroy();
    await db?.drop();
  });

  /** The value of a series in /metrics (0 when absent). */
  async function metric(series: string): Promise<number> {
    const text = (await api.get('/metrics')).body as string;
    const line = text.split('\n').find((l) => l.startsWith(`${series} `));
    return line ? Number(line.slice(series.length + 1)) : 0;
  }

  it("answers /healthz under a flood of idle connections from the checker's own address, held at its cap", async () => {
    const f = await flood({ port, count: FLOOD, from: ['127.0.0.1'] });
    try {
      expect(f.opened).toBe(FLOOD);
      const health = await healthzSeries(port, 50);
      figures.push(`${FLOOD} idle connections from 127.0.0.1: ${summarize(health.ms)}`);
      expect(health.failures).toEqual([]);
      // The flood's connections beyond the cap were closed to make room (and one more for each check).
      await waitFor(() => f.open() <= PER_ADDRESS, { message: `the address holds ${f.open()} connections` });
      expect(await metric('wp_http_connections_evicted_total{cap="per_address"}')).toBeGreaterThanOrEqual(FLOOD - PER_ADDRESS);
    } finally {
      f.close();
    }
  });

  it('answers /healthz under a flood of slow-header connections from many addresses, over the total cap, and times them out', async () => {
    const evictedBefore = await metric('wp_http_connections_evicted_total{cap="total"}');
    const f = await flood({ port, count: FLOOD, from: loopbackAddresses(60), slowHeaders: true });
    try {
      expect(f.opened).toBe(FLOOD);
      const health = await healthzSeries(port, 50);
      figures.push(`${FLOOD} slow-header connections from 60 addresses: ${summarize(health.ms)}`);
      expect(health.failures).toEqual([]);
      expect(await metric('wp_http_connections_evicted_total{cap="total"}')).toBeGreaterThanOrEqual(evictedBefore + FLOOD - CAP);
      expect(await metric('wp_http_connections_open')).toBeLessThanOrEqual(CAP);
      // HTTP_HEADERS_TIMEOUT_MS (10 s) closes the rest; node's default would take 60-90 s.
      await waitFor(() => f.open() === 0, { timeoutMs: 40_000, message: 'slow-header connections left open' });
      expect((await healthzSeries(port, 5)).failures).toEqual([]);
    } finally {
      f.close();
    }
  });
});
