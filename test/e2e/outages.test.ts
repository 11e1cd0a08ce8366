/**
 * Issue 24 as a user meets it, through `npm start` with its defaults (the blacklist check fails
 * secure): the embedded redis-server frozen (SIGSTOP: its connections stay up and nothing
 * answers), then the embedded PostgreSQL. During each, a few hundred requests over the API's
 * routes (test/support/outage-load.ts) are each answered within the bound: 503 with Retry-After
 * naming the dependency, or the route's fallback; p50/p99/max printed. Afterwards the platform
 * serves again by itself and logged nothing at error level that the outages do not explain.
 * (Stopped services: test/api/outage-latency.test.ts; the embedded ones restarted when they die
 * are the owner's business, not this file's.)
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/services/free-port.js';
import { freezeProcessTree } from '../support/process-tree.js';
import type { ApiClient } from '../support/http-client.js';
import {
  complaints,
  describeLatency,
  drive,
  latency,
  makeFixtures,
  makeLoginUser,
  outageCalls,
  type Dependency,
  type Fixtures,
} from '../support/outage-load.js';
import { waitFor } from '../support/wait.js';
import { adminClient, Expectations, removeDataDir, startProduct, type ProductProcess } from './support/product.js';

const REQUESTS = 240;
const CONCURRENCY = 48;
/** The hang check (the platform's own bound is HTTP_OUTAGE_DEADLINE_MS, 5 s). */
const BOUND_MS = 30_000;
const CLIENT_LIMIT_MS = 40_000;
const PHASE_TIMEOUT_MS = 240_000;

describe('npm start while its Redis or PostgreSQL is frozen', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'wp-e2e-outages-'));
  const expectations = new Expectations();
  const figures: string[] = [];
  let product: ProductProcess;
  let api: ApiClient;
  let fixtures: Fixtures;
  let thaw: (() => void) | undefined;

  // The fixture feeds point at a closed port of loopback: their refreshes fail, as they should.
  expectations.expectJobFailure((l) => l.queue === 'feed-refresh' && /connection_failed/.test(String(l.err)));

  beforeAll(async () => {
    product = await startProduct({ dataDir, port: await freePort(), env: { OUTBOUND_ALLOW: '127.0.0.0/8' } });
    api = await adminClient(product.url!);
    fixtures = await makeFixtures({ baseUrl: api.baseUrl, token: api.token! });
  });
  afterAll(async () => {
    thaw?.();
    console.log(`npm start, request latency while a dependency is down (deadline 5 s):\n  ${figures.join('\n  ')}`);
    await product?.stop();
    await removeDataDir(dataDir);
  });

  /** The pid an embedded service logged last when it started (a restarted one logs again). */
  function servicePid(message: string): number {
    const line = product
      .lines()
      .filter((l) => l.msg.startsWith(message))
      .at(-1);
    if (typeof line?.pid !== 'number') throw new Error(`no "${message}" line with a pid`);
    return line.pid;
  }

  async function duringOutage(phase: string, down: Dependency, outage: () => () => Promise<void>): Promise<void> {
    const client = { baseUrl: api.baseUrl, token: api.token! };
    const tag = phase.toLowerCase().replace(/\W+/g, '-');
    const login = await makeLoginUser(client, tag);
    const restore = outage();
    let answers;
    try {
      answers = await drive(client, outageCalls(fixtures, login, REQUESTS, tag), { concurrency: CONCURRENCY, timeoutMs: CLIENT_LIMIT_MS });
    } finally {
      await restore();
    }
    figures.push(describeLatency(phase, latency(answers)));
    // The platform serves again by itself (first: a failed check must not leave the next outage
    // starting on this one's tail).
    await waitFor(async () => (await api.get('/readyz')).status === 200, { timeoutMs: 60_000, message: `${down} not ready again` });
    await waitFor(async () => (await api.get('/api/queues')).status === 200 && (await api.get('/api/feeds')).status === 200, {
      timeoutMs: 60_000,
      message: 'the API did not recover',
    });
    expect(complaints(answers, down, BOUND_MS)).toEqual([]);
  }

  it(
    'answers every request within the bound while the embedded Redis is frozen',
    async () => {
      await duringOutage('Redis frozen', 'redis', () => {
        thaw = freezeProcessTree(servicePid('embedded redis-server started'));
        return async () => thaw!();
      });
    },
    PHASE_TIMEOUT_MS,
  );

  it(
    'answers every request within the bound while the embedded PostgreSQL is frozen',
    async () => {
      await duringOutage('PostgreSQL frozen', 'database', () => {
        thaw = freezeProcessTree(servicePid('embedded PostgreSQL started'));
        return async () => thaw!();
      });
    },
    PHASE_TIMEOUT_MS,
  );

  it('logged nothing at error level that the outages do not explain', () => {
    expect(expectations.unexpected(product.lines())).toEqual([]);
  });
});
