/**
 * `npm start` supervises the redis-server and PostgreSQL it runs (invariant 10), with a second
 * terminal's `npm run start:role -- api` attached to them:
 * - the redis-server child killed (SIGKILL): started again on the same port by itself, /readyz
 *   of both processes back to 200 without anyone restarting anything, the attached process's
 *   connections log "restored", a message appended through one process is read back through the
 *   other; the log says what happened and /metrics counts the restart;
 * - the same for the PostgreSQL server (postmaster SIGKILL; its orphaned backends may hold the
 *   old shared memory for a moment, which the restart's backoff waits out): rows written through
 *   the attached process are served by the owner;
 * - a Ctrl-C right after the redis-server died stops at once: the service comes back for the
 *   stop, and no worker waits out its grace period for it (before: 35 s).
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/services/free-port.js';
import type { ServicesState } from '../../src/services/services-file.js';
import { ApiClient } from '../support/http-client.js';
import { waitFor } from '../support/wait.js';
import { adminClient, Expectations, removeDataDir, startProduct, type LogLine, type ProductProcess } from './support/product.js';

/** No crawls (no IP is created), default grace period: the 35 s a stop used to wait. */
const SETTINGS = { CRAWLER_HUMANIZE: 'false' };
/** What a query meets while PostgreSQL is down or recovering from the crash. */
const OUTAGE = /database system is (starting up|in recovery mode|shutting down)|unexpected postmaster exit|Connection terminated|ECONNREFUSED|ECONNRESET/;

describe('npm start restarts its redis-server and PostgreSQL when they die', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'wp-e2e-supervise-'));
  const expectations = new Expectations();
  const started: ProductProcess[] = [];
  let owner: ProductProcess;
  let attached: ProductProcess;
  let ownerApi: ApiClient;
  let attachedApi: ApiClient;
  const state = () => JSON.parse(readFileSync(path.join(dataDir, 'services.json'), 'utf8')) as ServicesState;
  const redisPid = () => Number(readFileSync(path.join(dataDir, 'redis/redis.pid'), 'utf8').trim());
  const postmasterPid = () => Number(readFileSync(path.join(dataDir, 'postgres/data/postmaster.pid'), 'utf8').split('\n')[0]);
  const ready = async (api: ApiClient) => (await api.get('/readyz')).status === 200;
  /** Waits for a log line of `p` written after the first `from` lines. */
  const logged = (p: ProductProcess, from: number, matches: (l: LogLine) => boolean, message: string) =>
    waitFor(() => p.lines().slice(from).find(matches), { timeoutMs: 60_000, message });
  const metric = async (series: string) => {
    const text = (await ownerApi.get('/metrics')).body as string;
    return Number(new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1]);
  };

  beforeAll(async () => {
    owner = await startProduct({ dataDir, port: await freePort(), env: SETTINGS });
    started.push(owner);
    attached = await startProduct({ dataDir, port: await freePort(), command: ['start:role', 'api'], env: SETTINGS });
    started.push(attached);
    expect(attached.output()).toContain('attached to the embedded services of a running platform process');
    ownerApi = await adminClient(owner.url!);
    attachedApi = await adminClient(attached.url!);
  });
  afterAll(async () => {
    for (const p of started) await p.stop();
    await removeDataDir(dataDir);
  });

  it('starts a killed redis-server again on the same port; both processes reconnect and work goes on', async () => {
    const port = state().redis!.port;
    const killed = redisPid();
    const [ownerFrom, attachedFrom] = [owner.lines().length, attached.lines().length];
    expectations.expectError(/^embedded redis-server exited unexpectedly/);

    process.kill(killed, 'SIGKILL');

    const died = await logged(owner, ownerFrom, (l) => l.msg.startsWith('embedded redis-server exited unexpectedly'), 'the death logged');
    expect(died).toMatchObject({ level: 50, service: 'redis', pid: killed, signal: 'SIGKILL', log: path.join(dataDir, 'redis/redis.log') });
    await logged(owner, ownerFrom, (l) => l.msg === 'embedded redis-server restarted', 'the restart logged');
    expect(redisPid()).not.toBe(killed);
    expect(state().redis!.port).toBe(port);
    await waitFor(() => ready(ownerApi), { timeoutMs: 30_000, message: 'owner ready again' });
    await waitFor(() => ready(attachedApi), { timeoutMs: 30_000, message: 'attached process ready again' });
    await logged(attached, attachedFrom, (l) => l.msg === 'redis connection restored', "the attached process's connections restored");

    // Work goes on: a message appended through the attached process is read back through the owner.
    const sent = await attachedApi.post('/api/sessions/after-redis-restart/messages', { role: 'user', content: 'still here' });
    expect(sent.status).toBe(201);
    const read = await ownerApi.get('/api/sessions/after-redis-restart/messages');
    expect(read.body.messages.map((m: { content: string }) => m.content)).toEqual(['still here']);

    expect(await metric('wp_embedded_service_restarts_total{service="redis"}')).toBe(1);
    expect(await metric('wp_embedded_service_up{service="redis"}')).toBe(1);
    expect(owner.child.exitCode).toBeNull();
    expect(attached.child.exitCode).toBeNull();
  }, 180_000);

  it('starts a killed PostgreSQL again on the same port; both processes reconnect and work goes on', async () => {
    const port = state().postgres!.port;
    const killed = postmasterPid();
    const ownerFrom = owner.lines().length;
    expectations.expectError(/^embedded PostgreSQL exited unexpectedly/);
    // A job attempt that meets the database while it is down or still recovering may fail and be
    // retried (a periodic maintenance run, a message write-behind): nothing is lost. Telling an
    // outage from a failure there is the queue layer's part of invariant 10, not the supervisor's.
    expectations.expectJobFailure((l) => OUTAGE.test(String(l.err)));

    process.kill(killed, 'SIGKILL');

    const died = await logged(owner, ownerFrom, (l) => l.msg.startsWith('embedded PostgreSQL exited unexpectedly'), 'the death logged');
    expect(died).toMatchObject({ level: 50, service: 'postgres', pid: killed, signal: 'SIGKILL' });
    expect(died.log).toMatch(/server\.log$/);
    await logged(owner, ownerFrom, (l) => l.msg === 'embedded PostgreSQL restarted', 'the restart logged');
    await logged(owner, ownerFrom, (l) => l.msg === 'database connection restored', "the owner's database connections restored");
    expect(postmasterPid()).not.toBe(killed);
    expect(state().postgres!.port).toBe(port);
    await waitFor(() => ready(ownerApi), { timeoutMs: 30_000, message: 'owner ready again' });
    await waitFor(() => ready(attachedApi), { timeoutMs: 30_000, message: 'attached process ready again' });

    // Work goes on: rows written through the attached process are served by the owner.
    const added = await attachedApi.post('/api/pools/titles/7/items', { items: [{ text: 'kept title', batchId: 1 }] });
    expect(added).toMatchObject({ status: 201, body: { inserted: 1 } });
    const popped = await ownerApi.post('/api/pools/titles/7/pop');
    expect(popped).toMatchObject({ status: 200, body: { text: 'kept title' } });
    const sent = await attachedApi.post('/api/sessions/after-pg-restart/messages', { role: 'user', content: 'and here' });
    expect(sent.status).toBe(201);

    expect(await metric('wp_embedded_service_restarts_total{service="postgres"}')).toBe(1);
    expect(await metric('wp_embedded_service_up{service="postgres"}')).toBe(1);
    expect(await metric('wp_embedded_service_restarts_total{service="redis"}')).toBe(1);
  }, 180_000);

  it('stops at once on a Ctrl-C right after its redis-server died', async () => {
    expect(await attached.stop()).toMatchObject({ clean: true });
    const from = owner.lines().length;
    process.kill(redisPid(), 'SIGKILL');
    const stopped = await owner.stop('SIGINT');
    expect(stopped).toMatchObject({ code: 0, clean: true });
    const during = owner.lines().slice(from);
    // No step waited for the dead service until the grace period or the deadline ran out.
    expect(during.filter((l) => /outlived the grace period|did not close|deadline passed|is lost/.test(l.msg)).map((l) => l.msg)).toEqual([]);
    expect(state().owner).toBeNull();
  }, 120_000);

  it('logged no error and failed no job that the test did not cause', () => {
    expect(started.flatMap((p) => expectations.unexpected(p.lines()))).toEqual([]);
  });
});
