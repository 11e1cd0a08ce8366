/**
 * The production build as the Docker image runs it: `npm run build` (TypeScript to dist/, the Lua
 * scripts beside their modules), then `node dist/workers/all.js` with no tsx anywhere. Used over
 * HTTP as after `npm start`: health, a pool served once, a feed refreshed into articles, Bull
 * Board, and a clean stop. (Every other end-to-end test runs the sources through tsx; without
 * this one nothing would notice a build that does not start or a file it leaves behind.)
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/services/free-port.js';
import { startFeedServer, type FeedServer } from '../fixtures/feeds/feed-server.js';
import type { ApiClient } from '../support/http-client.js';
import { waitFor } from '../support/wait.js';
import { adminClient, Expectations, removeDataDir, startProduct, type ProductProcess } from './support/product.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

describe('the production build (npm run build, node dist/workers/all.js)', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'wp-e2e-built-'));
  const expectations = new Expectations();
  let product: ProductProcess;
  let feeds: FeedServer;
  let api: ApiClient;

  beforeAll(async () => {
    await promisify(execFile)('npm', ['run', '--silent', 'build'], { cwd: ROOT, timeout: 240_000 });
    expect(existsSync(path.join(ROOT, 'dist/workers/all.js'))).toBe(true);
    feeds = await startFeedServer();
    product = await startProduct({ dataDir, port: await freePort(), command: ['built'], env: { OUTBOUND_ALLOW: '127.0.0.0/8' } });
    api = await adminClient(product.url!);
  }, 360_000);
  afterAll(async () => {
    await product?.stop();
    await feeds?.stop();
    await removeDataDir(dataDir);
  });

  it('runs without tsx and answers health and readiness', async () => {
    const ps = await promisify(execFile)('ps', ['-o', 'args=', '-p', String(product.pid)]);
    expect(ps.stdout).toContain('dist/workers/all.js');
    expect(ps.stdout).not.toContain('tsx');
    expect((await api.get('/healthz')).status).toBe(200);
    await waitFor(async () => (await api.get('/readyz')).status === 200, { timeoutMs: 30_000, message: 'ready' });
  });

  it('serves imported pool rows once each, with its Lua scripts, then pool_empty', async () => {
    const items = Array.from({ length: 5 }, (_, i) => ({ text: `built ${i}`, batchId: 1 }));
    expect((await api.post('/api/pools/titles/7/items', { items })).status).toBe(201);
    const served: string[] = [];
    await waitFor(
      async () => {
        const one = await api.post<{ text: string }>('/api/pools/titles/7/pop');
        if (one.status === 200) served.push(one.body.text);
        else expect(one.status).toBe(404);
        return one.status === 404 && served.length >= items.length;
      },
      { timeoutMs: 20_000, intervalMs: 20, message: 'every row served, then pool_empty' },
    );
    expect(served.sort()).toEqual(items.map((i) => i.text).sort());
  });

  it('refreshes a feed into sanitized articles', async () => {
    const created = await api.post<{ id: number }>('/api/feeds', { url: feeds.url('/versioned/built.xml') });
    expect(created.status).toBe(201);
    const id = created.body.id;
    const feed = await waitFor(
      async () => {
        const f = (await api.get<{ status: string; lastError: string | null }>(`/api/feeds/${id}`)).body;
        return f.status !== 'pending' ? f : undefined;
      },
      { timeoutMs: 60_000, message: 'the first refresh' },
    );
    expect(feed).toMatchObject({ status: 'ok', lastError: null });
    const { articles } = (await api.get<{ articles: { title: string | null }[] }>(`/api/feeds/${id}/articles?limit=100`)).body;
    expect(articles).toHaveLength(3);
    expect(articles.every((a) => typeof a.title === 'string' && a.title.length > 0)).toBe(true);
  });

  it('serves Bull Board to a token, and stops cleanly', async () => {
    const board = await api.get<{ queues: { name: string }[] }>('/admin/queues/api/queues');
    expect(board.status).toBe(200);
    expect(board.body.queues.map((q) => q.name)).toEqual(expect.arrayContaining(['feed-refresh']));
    const stopped = await product.stop();
    expect(stopped).toMatchObject({ code: 0, clean: true });
    expect(expectations.unexpected(product.lines())).toEqual([]);
  });
});
