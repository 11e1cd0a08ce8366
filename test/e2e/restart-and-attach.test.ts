/**
 * The embedded services as a user meets them, over two terminals and nothing configured:
 * - `npm start` runs its own PostgreSQL and Redis, open only with the generated passwords kept in
 *   DATA_DIR/services.json (0600), never logged;
 * - `npm run start:role -- crawler` in a second terminal attaches to them, shows up in
 *   GET /api/cluster and takes crawls (its instance id in the crawl's result);
 * - the owner stopping does not stop the attached worker: it logs the outage once and goes on by
 *   itself when `npm start` runs again (same ports, same passwords);
 * - stopped and started again, the platform keeps its data;
 * - with no owner running, the first process of any role starts the services itself.
 *
 * DATA_DIR is a `mktemp -d` folder (0700): as root the server's postgres user cannot reach it,
 * so this also covers the cluster kept outside DATA_DIR (postgres-server-process.ts).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, isPortFree } from '../../src/services/free-port.js';
import type { ServicesState } from '../../src/services/services-file.js';
import type { ApiClient } from '../support/http-client.js';
import { waitFor } from '../support/wait.js';
import { adminClient, DEFAULT_ADMIN, Expectations, removeDataDir, startProduct, type ProductProcess } from './support/product.js';

const run = promisify(execFile);
const DASHBOARD_DOMAIN_METRICS: string[] = JSON.parse(readFileSync(new URL('../../dashboards/grafana/domain-metrics.json', import.meta.url), 'utf8'));

/** Settings a user might give both processes: one crawl at a time in the owner, short crawls. */
const SETTINGS = { SCHEDULER_PAGES_ON_SALE: '1', SCHEDULER_PAGES_SOLD: '0', CRAWLER_HUMANIZE: 'false', WORKER_SHUTDOWN_GRACE_MS: '10000' };

describe('npm start, a second terminal attached to it, stops and restarts', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'wp-e2e-attach-'));
  const expectations = new Expectations();
  /** Every process started here, for the final check of their logs. */
  const started: ProductProcess[] = [];
  let port: number;
  let owner: ProductProcess | undefined;
  let worker: ProductProcess | undefined;
  let api: ApiClient;
  const state = () => JSON.parse(readFileSync(path.join(dataDir, 'services.json'), 'utf8')) as ServicesState;

  beforeAll(async () => {
    port = await freePort();
    owner = await startProduct({ dataDir, port, env: { ...SETTINGS, CRAWLER_CONCURRENCY: '1' } });
    started.push(owner);
    api = await adminClient(owner.url!);
  });
  afterAll(async () => {
    await worker?.stop();
    await owner?.stop();
    await removeDataDir(dataDir);
  });

  /** Creates an IP and waits for its first crawl's result; the instance that crawled. */
  async function crawlOnce(name: string): Promise<string> {
    const ip = (await api.post('/api/ips', { name, keyword: `e2e-${name}` })).body;
    const taskId = ip.currentCrawl.taskId as string;
    const done = await waitFor(
      async () => {
        const task = (await api.get(`/api/tasks/${taskId}`)).body;
        return task.state === 'completed' ? task : undefined;
      },
      { timeoutMs: 180_000, intervalMs: 250, message: `crawl of ${name}` },
    );
    return done.result.crawledBy as string;
  }

  it('runs its own services, open only with the generated passwords, which it never logs', async () => {
    expect(owner!.output()).toContain('embedded redis-server started');
    expect(owner!.output()).toContain('embedded PostgreSQL started');
    // As root, the postgres user cannot reach this 0700 folder: the cluster lives where it can.
    if (process.getuid?.() === 0) expect(owner!.output()).toContain('the postgres user cannot reach DATA_DIR');
    expect(statSync(path.join(dataDir, 'services.json')).mode & 0o777).toBe(0o600);
    const s = state();
    expect(s.owner?.pid).toBeGreaterThan(0);
    expect(s.redis!.password).toMatch(/^[0-9a-f]{48}$/);
    expect(s.postgres!.password).toMatch(/^[0-9a-f]{48}$/);
    expect(owner!.output()).not.toContain(s.redis!.password);
    expect(owner!.output()).not.toContain(s.postgres!.password);

    // Without the password: refused.
    const noAuth = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(s.redis!.port), 'ping']);
    expect(noAuth.stdout).toMatch(/NOAUTH/);
    const psql = await run('psql', ['-w', '-h', '127.0.0.1', '-p', String(s.postgres!.port), '-U', 'postgres', '-d', 'platform', '-c', 'select 1']).then(
      () => 'connected',
      (err: { stderr: string }) => err.stderr,
    );
    expect(psql).toMatch(/no password supplied/);
    const wrong = await run('psql', ['-h', '127.0.0.1', '-p', String(s.postgres!.port), '-U', 'postgres', '-d', 'platform', '-c', 'select 1'], {
      env: { ...process.env, PGPASSWORD: 'guess' },
    }).then(
      () => 'connected',
      (err: { stderr: string }) => err.stderr,
    );
    expect(wrong).toMatch(/password authentication failed/);
    // With it: served (what an attaching process does).
    const withAuth = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(s.redis!.port), '--no-auth-warning', '-a', s.redis!.password, 'ping']);
    expect(withAuth.stdout.trim()).toBe('PONG');
  });

  it('lets a second terminal attach a crawler that takes crawls and shows in the cluster', async () => {
    worker = await startProduct({ dataDir, command: ['start:role', 'crawler'], env: SETTINGS });
    started.push(worker);
    expect(worker.output()).toContain('attached to the embedded services of a running platform process');
    expect(worker.output()).not.toContain('embedded redis-server started');
    const workerId = /instance (\S+); attached/.exec(worker.output())![1]!;
    const ownerId = /instance (\S+)\)/.exec(owner!.output())![1]!;

    const cluster = await waitFor(
      async () => {
        const body = (await api.get('/api/cluster')).body;
        return body.instances.length === 2 ? body : undefined;
      },
      { timeoutMs: 30_000, message: 'both instances in the registry' },
    );
    expect(cluster.instances.map((i: { id: string }) => i.id).sort()).toEqual([ownerId, workerId].sort());
    expect(cluster.instances.find((i: { id: string }) => i.id === workerId)).toMatchObject({ roles: ['crawler'], queues: ['crawl'] });

    // The owner crawls one at a time: of four crawls queued at once, the attached crawler takes some.
    const crawledBy = await Promise.all(['one', 'two', 'three', 'four'].map((n) => crawlOnce(`attach-${n}`)));
    expect(crawledBy).toContain(workerId);
  }, 300_000);

  it('keeps the attached worker through a stop of the owner; it resumes when npm start runs again', async () => {
    const ports = { redis: state().redis!.port, postgres: state().postgres!.port };
    const before = worker!.lines().length;
    expect(await owner!.stop()).toMatchObject({ code: 0, clean: true });
    expect(state().owner).toBeNull();
    // Its services stopped with it.
    expect(await isPortFree(ports.redis)).toBe(true);
    expect(await isPortFree(ports.postgres)).toBe(true);

    await sleep(3000); // the attached worker meets the outage
    expect(worker!.child.exitCode).toBeNull();
    const during = worker!.lines().slice(before);
    const outages = during.filter((l) => l.msg === 'redis connection error; reconnecting');
    // Once per connection, not once per retry.
    expect(outages.length).toBeGreaterThan(0);
    expect(new Set(outages.map((l) => l.connection)).size).toBe(outages.length);

    owner = await startProduct({ dataDir, port, env: { ...SETTINGS, CRAWLER_CONCURRENCY: '1' } });
    started.push(owner);
    expect(state().redis!.port).toBe(ports.redis);
    expect(state().postgres!.port).toBe(ports.postgres);
    api = await adminClient(owner.url!);
    await waitFor(
      () =>
        worker!
          .lines()
          .slice(before)
          .some((l) => l.msg === 'redis connection restored'),
      { timeoutMs: 30_000, message: 'the attached worker back' },
    );
    const workerId = /instance (\S+); attached/.exec(worker!.output())![1]!;
    const crawledBy = await Promise.all(['five', 'six', 'seven', 'eight'].map((n) => crawlOnce(`resume-${n}`)));
    expect(crawledBy).toContain(workerId);
  }, 300_000);

  it('keeps its data across a stop and start of everything', async () => {
    const token = (await api.post('/api/auth/login', DEFAULT_ADMIN)).body.token as string;
    const subscribed = await api.post('/api/feeds', { url: 'http://127.0.0.1:9/kept.xml', refreshIntervalMinutes: 1440 });
    expect(subscribed.status).toBe(201);
    const ipsBefore = (await api.get('/api/ips')).body.ips;
    expect(ipsBefore).toHaveLength(8);
    expect((await api.withToken(token).post('/api/auth/logout')).status).toBe(204);
    // (The feed points at a closed port: its refreshes fail on purpose.)
    expectations.expectJobFailure((l) => l.queue === 'feed-refresh' && String(l.jobId).startsWith(`feed-${subscribed.body.id}-`));

    expect((await worker!.stop()).clean).toBe(true);
    expect(await owner!.stop()).toMatchObject({ code: 0, clean: true });
    owner = await startProduct({ dataDir, port, env: SETTINGS });
    started.push(owner);
    expect(owner.output()).not.toContain('migrations applied');
    api = await adminClient(owner.url!);
    expect((await api.get('/api/ips')).body.ips.map((i: { id: number }) => i.id)).toEqual(ipsBefore.map((i: { id: number }) => i.id));
    expect((await api.get(`/api/feeds/${subscribed.body.id}`)).status).toBe(200);
    // The logout recorded in Redis before the restart still holds (AOF).
    expect((await api.withToken(token).get('/api/queues')).body.error.code).toBe('token_revoked');
    // Every role runs: /metrics exports each domain metric the Grafana dashboard plots.
    const text = (await api.get('/metrics')).body as string;
    expect(DASHBOARD_DOMAIN_METRICS.filter((name) => !text.includes(`# TYPE ${name} `))).toEqual([]);
    // And every metric the Prometheus alert rules watch.
    const ruleMetrics = new Set(
      [...readFileSync(new URL('../../dashboards/prometheus/alert-rules.yml', import.meta.url), 'utf8').matchAll(/\bwp_[a-z0-9_]+/g)].map(([m]) =>
        m.replace(/_(bucket|sum|count)$/, ''),
      ),
    );
    expect(ruleMetrics.size).toBeGreaterThan(10);
    expect([...ruleMetrics].filter((name) => !text.includes(`# TYPE ${name} `))).toEqual([]);
    expect(await owner.stop()).toMatchObject({ code: 0, clean: true });
  }, 180_000);

  it('starts the services in whichever process comes first when none runs them, and stops cleanly even when slow to see the signal', async () => {
    const alone = await startProduct({ dataDir, command: ['start:role', 'pools'], env: SETTINGS });
    started.push(alone);
    expect(alone.output()).toContain('embedded PostgreSQL started');
    const owner = state().owner?.pid;
    expect(owner).toBeGreaterThan(0);
    // A loaded machine: the platform process does not run for a moment when the stop comes (here it
    // is paused for 300 ms). Nothing between the terminal and it may give up on it meanwhile (the
    // tsx CLI that start:role used to run killed it with SIGKILL 60 ms after relaying the signal).
    process.kill(owner!, 'SIGSTOP');
    const stopping = alone.stop();
    await sleep(300);
    try {
      process.kill(owner!, 'SIGCONT');
    } catch {
      /* already killed by whatever was between the terminal and it */
    }
    const stopped = await stopping;
    expect(stopped, `the process printed:\n${alone.output().slice(-3000)}`).toMatchObject({ clean: true });
    expect(state().owner).toBeNull();
  }, 120_000);

  it('logged no error and failed no job that the test did not cause', () => {
    expect(started.flatMap((p) => expectations.unexpected(p.lines()))).toEqual([]);
  });
});
