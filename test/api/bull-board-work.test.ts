/**
 * What an operator sees of the platform's work in Bull Board, in real headless Chromium, on a
 * platform with the cluster, crawler (embedded fixture marketplace), pipeline and api roles:
 *
 * - a crawl is a flow: the job view of its result processing shows the flow graph, the parent
 *   (`result-<taskId>` on crawl-result) with its child (the crawl on `crawl`), and so does the
 *   job view of the crawl itself (a pending crawl is attached to its parent when it is taken);
 * - the crawl job's Logs tab shows a line per page, its Progress tab the pages and items;
 * - the Schedulers view lists the maintenance tasks, each with its period, last run and runs.
 */
import puppeteer, { type Browser, type Page } from 'puppeteer';
import { CHROMIUM_ARGS } from '../../src/crawl/launch-browser.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_ADMIN } from '../support/env.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { waitFor } from '../support/wait.js';

const TASKS = ['crawl-reconcile', 'feeds-reconcile', 'instance-registry-trim', 'processed-results-trim', 'shared-config-publish'];

describe('Bull Board: crawl flows, job logs and progress, maintenance schedulers', () => {
  let t: TestPlatform;
  let browser: Browser;
  let page: Page;
  let taskId: string;

  const text = () => page.evaluate(() => document.body.innerText);
  const waitForText = (fragments: string[], timeout = 20_000) =>
    // Case-insensitive: the board's headers are upper-cased by its CSS, which innerText reflects.
    page
      .waitForFunction((f: string[]) => f.every((x) => document.body.innerText.toLowerCase().includes(x.toLowerCase())), { timeout }, fragments)
      .catch(async (err) => {
        throw new Error(`${(err as Error).message}; page text:\n${(await text()).slice(0, 3000)}`);
      });

  beforeAll(async () => {
    t = await startTestPlatform({
      roles: ['cluster', 'crawler', 'pipeline', 'api'],
      env: {
        CRAWLER_HUMANIZE: 'false',
        CRAWLER_NETWORK_IDLE_MS: '100',
        SCHEDULER_PAGES_ON_SALE: '1',
        SCHEDULER_PAGES_SOLD: '1',
        CONFIG_REFRESH_INTERVAL_MS: '1000',
        SCHEDULER_RECONCILE_INTERVAL: '2',
        FEED_RECONCILE_INTERVAL_SECONDS: '2',
      },
    });
    browser = await puppeteer.launch({ executablePath: process.env.PUPPETEER_EXECUTABLE_PATH ?? '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS });
    page = await browser.newPage();
    await page.setViewport({ width: 1600, height: 1000 });
    await page.goto(`${t.api.baseUrl}/admin/queues`);
    await page.type('#username', TEST_ADMIN.username);
    await page.type('#password', TEST_ADMIN.password);
    await Promise.all([page.waitForNavigation(), page.click('#sign-in')]);

    const ip = (await t.api.post('/api/ips', { name: 'Board', keyword: 'board-flow' })).body;
    taskId = ip.currentCrawl.taskId;
    await waitFor(async () => (await t.api.get(`/api/tasks/result-${taskId}`)).body.state === 'completed', {
      timeoutMs: 120_000,
      intervalMs: 500,
      message: 'the crawl was not processed',
    });
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  it.each([
    ['its result', 'crawl-result', 'result-'],
    ['the crawl itself', 'crawl', ''],
  ])('shows a crawl as a flow from %s: the processing of its result with the crawl as its child', async (_from, queue, prefix) => {
    await page.goto(`${t.api.baseUrl}/admin/queues/queue/${queue}/${prefix}${taskId}`);
    await waitForText(['Job flow']);
    const nodes = await page.waitForFunction(
      (id: string) => {
        const labels = [...document.querySelectorAll('[aria-label]')].map((e) => e.getAttribute('aria-label') ?? '');
        const parent = labels.find((l) => l.includes('queue crawl-result') && l.includes(`id result-${id}`));
        const child = labels.find((l) => l.includes('queue crawl,') && l.includes(`id ${id}`));
        return parent && child ? [parent, child] : null;
      },
      { timeout: 20_000 },
      taskId,
    );
    const [parent, child] = (await nodes.jsonValue()) as [string, string];
    expect(parent).toBe(`result, completed, queue crawl-result, id result-${taskId}`);
    expect(child).toBe(`crawl, completed, queue crawl, id ${taskId}`);
  });

  it("shows the crawl job's log lines and its progress", async () => {
    await page.goto(`${t.api.baseUrl}/admin/queues/queue/crawl/${taskId}`);
    await waitForText(['Logs']);
    await clickTab(page, 'Logs');
    await waitForText(['on_sale page 1: 120 items', 'sold page 1: 120 items']);
    await clickTab(page, 'Progress');
    await waitForText(['pagesDone', 'pagesPlanned', 'items', '240', 'proxy', 'direct']);
  });

  it('lists the scheduled maintenance tasks with their last runs', async () => {
    // Every task has run (at least once) before the board is opened.
    const queue = t.platform.ctx.queues.queue('maintenance');
    await waitFor(
      async () => {
        const done = new Set((await queue.getJobs(['completed'], 0, -1)).map((j) => j?.name));
        return TASKS.every((name) => done.has(name));
      },
      { timeoutMs: 30_000, message: 'not every task ran' },
    );
    await page.goto(`${t.api.baseUrl}/admin/queues/job-schedulers`);
    await waitForText(['Schedulers', 'Last run', ...TASKS]);
    const rows = await page.evaluate((tasks: string[]) => {
      const cells = (tr: Element) => [...tr.querySelectorAll('td')].map((td) => (td as HTMLElement).innerText.trim());
      const header = [...document.querySelectorAll('th')].map((th) => (th as HTMLElement).innerText.trim().toLowerCase());
      return tasks.map((task) => {
        const tr = [...document.querySelectorAll('tr')].find((r) => (r as HTMLElement).innerText.includes(task));
        const values = tr ? cells(tr) : [];
        return { task, row: Object.fromEntries(header.map((h, i) => [h, values[i] ?? ''])) };
      });
    }, TASKS);
    for (const { task, row } of rows) {
      expect(row['queue'], task).toBe('maintenance');
      expect(row['schedule'], task).toMatch(/^every \d+(ms|s|m|h)$/);
      expect(row['last run'], task).toMatch(/ago|now/); // e.g. "6:35:40 PM\n4 seconds ago"
      expect(Number.parseInt(row['runs'] ?? '', 10), task).toBeGreaterThan(0);
    }
  });
});

/** Clicks the tab (or button) whose text is `label`. */
async function clickTab(page: Page, label: string): Promise<void> {
  const clicked = await page.evaluate((l: string) => {
    const el = [...document.querySelectorAll('button, [role=tab], a')].find((e) => (e as HTMLElement).innerText.trim() === l) as HTMLElement | undefined;
    el?.click();
    return Boolean(el);
  }, label);
  expect(clicked, `tab ${label}`).toBe(true);
}
