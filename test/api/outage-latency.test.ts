/**
 * Issue 24, invariant 10: while Redis or PostgreSQL is down, stopped and then frozen (SIGSTOP:
 * the connections stay up and nothing answers), every request is answered within seconds: 503
 * with Retry-After naming the dependency, or the route's documented fallback. A few hundred
 * requests over the API's routes per outage (test/support/outage-load.ts), their p50/p99/max
 * printed.
 *
 * The platform runs with AUTH_FAIL_OPEN=true so that requests get past the blacklist check while
 * Redis is down and reach the handlers' own Redis paths (adding jobs, the job console, Bull
 * Board, the pools' and messages' fallbacks); test/e2e/outages.test.ts covers the default (fail
 * secure) through `npm start`. Its own PostgreSQL cluster and Redis, as both are stopped and
 * frozen here.
 *
 * The bound asserted is the client's hang check (BOUND_MS, 30 s, far above the platform's 5 s
 * HTTP_OUTAGE_DEADLINE_MS, the design); before the deadline and the client-side limits, requests
 * on a frozen Redis or database waited for as long as it stayed frozen, and this failed.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freezeProcessTree } from '../support/process-tree.js';
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
import { existingDatabase } from '../support/database.js';
import { startPostgresCluster, type PostgresCluster } from '../support/postgres-cluster.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { waitFor } from '../support/wait.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Requests per outage: ten rounds of the mix's 24 routes. */
const REQUESTS = 240;
const CONCURRENCY = 48;
/** The hang check: an answer later than this is a failure (the platform's own bound is 5 s). */
const BOUND_MS = 30_000;
/** How long the client waits at most for one answer. */
const CLIENT_LIMIT_MS = 40_000;
const PHASE_TIMEOUT_MS = 180_000;

async function migrate(url: string): Promise<void> {
  await promisify(execFile)(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src/db/cli-migrate.ts')], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, DATABASE_URL: url, LOG_LEVEL: 'silent' },
  });
}

describe('request latency while a dependency is down', () => {
  let cluster: PostgresCluster;
  let t: TestPlatform;
  let fixtures: Fixtures;
  let thaw: (() => void) | undefined;
  const figures: string[] = [];

  beforeAll(async () => {
    cluster = await startPostgresCluster();
    const admin = new pg.Client({ connectionString: cluster.url });
    await admin.connect();
    await admin.query('CREATE DATABASE outage_latency');
    await admin.end();
    const u = new URL(cluster.url);
    u.pathname = '/outage_latency';
    await migrate(u.toString());
    t = await startTestPlatform({ roles: ['api'], db: existingDatabase(u.toString(), 10), env: { AUTH_FAIL_OPEN: 'true' } });
    fixtures = await makeFixtures({ baseUrl: t.api.baseUrl, token: t.api.token! });
    // The same mix with everything up: warms the process (the first phase is not its cold start)
    // and gives the figures to compare with.
    const client = { baseUrl: t.api.baseUrl, token: t.api.token! };
    const baseline = await drive(client, outageCalls(fixtures, await makeLoginUser(client, 'baseline'), REQUESTS, 'baseline'), {
      concurrency: CONCURRENCY,
      timeoutMs: CLIENT_LIMIT_MS,
    });
    figures.push(describeLatency('everything up', latency(baseline)));
  }, 180_000);
  afterAll(async () => {
    thaw?.();
    console.log(`request latency while a dependency is down (deadline 5 s):\n  ${figures.join('\n  ')}`);
    await t?.stop();
    await cluster?.stop();
  });

  /** Runs the mix while `down` is out (`outage` takes it out and returns how to bring it back). */
  async function duringOutage(phase: string, down: Dependency, outage: () => Promise<() => Promise<void>>): Promise<void> {
    const client = { baseUrl: t.api.baseUrl, token: t.api.token! };
    const tag = phase.toLowerCase().replace(/\W+/g, '-');
    const login = await makeLoginUser(client, tag);
    const restore = await outage();
    let answers;
    try {
      answers = await drive(client, outageCalls(fixtures, login, REQUESTS, tag), { concurrency: CONCURRENCY, timeoutMs: CLIENT_LIMIT_MS });
    } finally {
      await restore();
    }
    figures.push(describeLatency(phase, latency(answers)));
    // The platform serves again by itself (first: a failed check must not leave the next outage
    // starting on this one's tail).
    await waitFor(async () => (await t.api.get('/readyz')).status === 200, { timeoutMs: 30_000, message: `${down} not ready again` });
    await waitFor(async () => (await t.api.get('/api/queues')).status === 200 && (await t.api.get('/api/feeds')).status === 200, {
      timeoutMs: 30_000,
      message: 'the API did not recover',
    });
    expect(complaints(answers, down, BOUND_MS)).toEqual([]);
  }

  it(
    'answers every request within the bound while Redis is stopped',
    async () => {
      await duringOutage('Redis stopped', 'redis', async () => {
        await t.redis.stop();
        return async () => {
          t.redis = await t.redis.restart();
        };
      });
    },
    PHASE_TIMEOUT_MS,
  );

  it(
    'answers every request within the bound while Redis is frozen (SIGSTOP)',
    async () => {
      await duringOutage('Redis frozen', 'redis', async () => {
        thaw = freezeProcessTree(t.redis.pid);
        return async () => thaw!();
      });
    },
    PHASE_TIMEOUT_MS,
  );

  it(
    'answers every request within the bound while PostgreSQL is stopped',
    async () => {
      await duringOutage('PostgreSQL stopped', 'database', async () => {
        await cluster.stopServer();
        return () => cluster.startServer();
      });
    },
    PHASE_TIMEOUT_MS,
  );

  it(
    'answers every request within the bound while PostgreSQL is frozen (SIGSTOP)',
    async () => {
      await duringOutage('PostgreSQL frozen', 'database', async () => {
        cluster.pause();
        thaw = () => cluster.resume();
        return async () => thaw!();
      });
    },
    PHASE_TIMEOUT_MS,
  );
});
