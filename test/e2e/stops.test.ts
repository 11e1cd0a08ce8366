/**
 * Stopping always ends, and loses nothing acknowledged: E2E_STOP_CYCLES (default 20) times, the
 * platform started as `npm start` starts it is stopped by SIGTERM to its whole process group
 * (what a terminal's Ctrl-C, systemd and test harnesses do) while a crawl, a feed refresh (a slow
 * server) and message appends with their drains run. Every stop must end within the deadline
 * (WORKER_SHUTDOWN_GRACE_MS + 5 s, plus the few seconds the embedded services take to stop);
 * after each restart every message the API acknowledged (201) is there, and every IP and feed
 * still has exactly one pending crawl or refresh.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/services/free-port.js';
import { startFeedServer, type FeedServer } from '../fixtures/feeds/feed-server.js';
import type { ApiClient } from '../support/http-client.js';
import { waitFor } from '../support/wait.js';
import { adminClient, Expectations, removeDataDir, startProduct, type ProductProcess } from './support/product.js';

const CYCLES = Number(process.env.E2E_STOP_CYCLES ?? 20);
const GRACE_MS = 2000;
/** The platform's own deadline (run.ts: grace + 5 s), plus time for the services to stop and the process to exit. */
const STOP_WITHIN_MS = GRACE_MS + 5000 + 5000;
const SESSION = 'stops';

describe(`${CYCLES} stops by a signal to the process group, with work in flight`, () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'wp-e2e-stops-'));
  const expectations = new Expectations();
  const started: ProductProcess[] = [];
  let server: FeedServer;
  let port: number;

  const start = async () => {
    const p = await startProduct({
      dataDir,
      port,
      env: {
        OUTBOUND_ALLOW: '127.0.0.0/8', // the slow feed server is on loopback
        WORKER_SHUTDOWN_GRACE_MS: String(GRACE_MS),
        SCHEDULER_PAGES_ON_SALE: '2',
        SCHEDULER_PAGES_SOLD: '1',
        CRAWLER_HUMANIZE: 'false',
        FEED_DOMAIN_MIN_INTERVAL_MS: '0',
      },
    });
    started.push(p);
    return { p, api: await adminClient(p.url!) };
  };

  beforeAll(async () => {
    port = await freePort();
    server = await startFeedServer();
  });
  afterAll(async () => {
    for (const p of started) await p.kill();
    await server?.stop();
    await removeDataDir(dataDir);
  });

  /** Appends until told to stop; the contents the API acknowledged. */
  function appendLoop(api: ApiClient, cycle: number) {
    const acknowledged: string[] = [];
    let running = true;
    const done = (async () => {
      for (let i = 0; running; i++) {
        const content = `cycle ${cycle} message ${i}`;
        const res = await api.post(`/api/sessions/${SESSION}/messages`, { role: 'user', content }).catch(() => undefined);
        if (res?.status === 201) acknowledged.push(content);
        else if (res && res.status !== 503) throw new Error(`append answered ${res.status}: ${JSON.stringify(res.body)}`);
        else break; // the API is going away
      }
    })();
    return {
      acknowledged,
      stop: async () => {
        running = false;
        await done;
      },
    };
  }

  it('ends every stop within the deadline and keeps everything acknowledged', async () => {
    let { p, api } = await start();
    const ip = (await api.post('/api/ips', { name: 'Stoppable', keyword: 'e2e-stops' })).body;
    const feed = (await api.post('/api/feeds', { url: server.url('/rss/slow.xml?delay=2500') })).body;
    const acknowledged: string[] = [];
    const stopTimes: number[] = [];

    for (let cycle = 0; cycle < CYCLES; cycle++) {
      // Work in flight: a crawl, a refresh of a slow feed, appends that queue drains.
      const trigger = await api.post(`/api/ips/${ip.id}/crawl`);
      expect(trigger.status).toBe(202);
      expect((await api.post('/api/queue/schedule-feed', { feed_id: feed.id, force_immediate: true })).status).toBe(202);
      const appends = appendLoop(api, cycle);
      let crawl: unknown;
      await waitFor(
        async () => {
          crawl = (await api.get(`/api/ips/${ip.id}`)).body.currentCrawl;
          return (crawl as { state?: string } | undefined)?.state === 'active';
        },
        { timeoutMs: 60_000, message: 'the crawl running' },
      ).catch((err: Error) => {
        throw new Error(`${err.message}; cycle ${cycle + 1}; the trigger answered ${JSON.stringify(trigger.body)}; the IP's crawl: ${JSON.stringify(crawl)}`);
      });
      await sleep((cycle * 377) % 1500); // a different moment of the crawl each time

      const stopped = await p.stop('SIGTERM', 120_000);
      await appends.stop();
      acknowledged.push(...appends.acknowledged);
      stopTimes.push(stopped.ms);
      expect(stopped, `stop ${cycle + 1}; the process printed:\n${p.output().slice(-3000)}`).toMatchObject({ code: 0, clean: true });
      expect(stopped.ms, `stop ${cycle + 1} took ${stopped.ms} ms`).toBeLessThan(STOP_WITHIN_MS);

      ({ p, api } = await start());
      // Nothing acknowledged is missing: every message, in order, once.
      const read = await waitFor(
        async () => {
          const body = (await api.get(`/api/sessions/${SESSION}/messages?limit=1000`)).body;
          return body.messages?.length >= Math.min(acknowledged.length, 1000) ? body : undefined;
        },
        { timeoutMs: 30_000, message: `messages after restart ${cycle + 1}` },
      );
      expect(read.messages.map((m: { content: string }) => m.content)).toEqual(acknowledged.slice(-1000));
    }

    // Each chain is whole: one pending (or running) crawl for the IP, one refresh for the feed.
    await waitFor(
      async () => {
        const detail = (await api.get(`/api/ips/${ip.id}`)).body;
        return detail.currentCrawl && ['delayed', 'waiting', 'prioritized', 'active'].includes(detail.currentCrawl.state);
      },
      { timeoutMs: 60_000, message: 'the IP keeps its crawl' },
    );
    await waitFor(
      async () => {
        const pending = await Promise.all(
          ['delayed', 'waiting', 'prioritized', 'active'].map(
            async (state) => (await api.get(`/api/queues/feed-refresh/jobs?state=${state}&start=0&end=100`)).body.jobs as { data: { feedId: number } }[],
          ),
        );
        return pending.flat().filter((j) => j.data.feedId === feed.id).length === 1;
      },
      { timeoutMs: 60_000, message: 'the feed keeps exactly one refresh' },
    );
    expect((await p.stop()).clean).toBe(true);
    console.log(
      `stops: ${stopTimes.length}, ms min ${Math.min(...stopTimes)} median ${[...stopTimes].sort((a, b) => a - b)[Math.floor(stopTimes.length / 2)]} max ${Math.max(...stopTimes)}; messages acknowledged ${acknowledged.length}`,
    );
  }, 1_800_000);

  it('logged no error and failed no job that the test did not cause', () => {
    expect(started.flatMap((p) => expectations.unexpected(p.lines()))).toEqual([]);
  });
});
