/**
 * Bull Board in real headless Chromium: anonymous visitors are refused (sent to the login
 * page; the board's API answers 401); after signing in through the page the board lists the
 * queues; a failed job retried from the board runs again and completes.
 */
import puppeteer, { type Browser } from 'puppeteer';
import { CHROMIUM_ARGS } from '../../src/crawl/launch-browser.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorker, type PlatformWorker } from '../../src/queues/create-worker.js';
import { TEST_ADMIN } from '../support/env.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { waitFor } from '../support/wait.js';

describe('Bull Board behind login', () => {
  let t: TestPlatform;
  let browser: Browser;
  let worker: PlatformWorker;
  let healed = false;

  beforeAll(async () => {
    t = await startTestPlatform({ roles: ['api'], env: { JOB_BACKOFF_MS: '10' } });
    worker = createWorker(t.platform.ctx, 'maintenance', async (job) => {
      if (!healed) throw new Error(`board test failure ${job.data.task}`);
      return 'fixed';
    });
    browser = await puppeteer.launch({ executablePath: process.env.PUPPETEER_EXECUTABLE_PATH ?? '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS });
  });
  afterAll(async () => {
    await browser?.close();
    await worker?.close();
    await t?.stop();
  });

  it('refuses anonymous requests to the board and its API', async () => {
    const anon = t.api.withToken(undefined);
    const api = await anon.get('/admin/queues/api/queues');
    expect(api.status).toBe(401);
    const page = await anon.get('/admin/queues', { accept: 'text/html' });
    expect(page.status).toBe(303);
    expect(page.headers.get('location')).toBe('/admin/login');
    const forged = await anon.get('/admin/queues/api/queues', { cookie: 'wp_session=not-a-token' });
    expect(forged.status).toBe(401);
  });

  it('signs in through the page, lists the queues, and retries a failed job from the board', async () => {
    const job = await t.platform.ctx.queues.add('maintenance', 'board-job', { task: 'from-board' });
    await waitFor(async () => (await job.getState()) === 'failed', { timeoutMs: 20_000 });

    const page = await browser.newPage();
    await page.goto(`${t.api.baseUrl}/admin/queues`);
    expect(new URL(page.url()).pathname).toBe('/admin/login');
    await page.type('#username', TEST_ADMIN.username);
    await page.type('#password', 'wrong-password');
    await Promise.all([page.waitForNavigation(), page.click('#sign-in')]);
    expect(await page.$eval('#login-error', (e) => e.textContent)).toContain('wrong password');

    await page.type('#username', TEST_ADMIN.username);
    await page.type('#password', TEST_ADMIN.password);
    await Promise.all([page.waitForNavigation(), page.click('#sign-in')]);
    expect(new URL(page.url()).pathname).toBe('/admin/queues');
    await page.waitForFunction(
      () => ['feed-refresh', 'crawl-result', 'pool-refill', 'message-persist', 'maintenance'].every((q) => document.body.innerText.includes(q)),
      { timeout: 20_000 },
    );

    await page.goto(`${t.api.baseUrl}/admin/queues/queue/maintenance?status=failed`);
    await page.waitForFunction(() => document.body.innerText.includes('board test failure from-board'), { timeout: 20_000 });

    healed = true;
    // The job card's retry action (an icon button; "Retry all" is the queue-wide one).
    const clicked = await page.evaluate(() => {
      const buttons = [...document.querySelectorAll('button')].filter((b) => b.querySelector('svg.lucide-refresh-cw') && !b.innerText.includes('Retry all'));
      const card = buttons.at(-1);
      card?.click();
      return Boolean(card);
    });
    expect(clicked).toBe(true);
    // The board asks for confirmation.
    await page.waitForSelector('[role=alertdialog]', { timeout: 10_000 });
    expect(await page.$eval('[role=alertdialog]', (d) => d.textContent)).toContain('retry this job');
    await page.evaluate(() => {
      const confirm = [...document.querySelectorAll('[role=alertdialog] button')].find((b) => /confirm|yes|retry|ok/i.test(b.textContent ?? ''));
      (confirm as HTMLButtonElement | undefined)?.click();
    });
    await waitFor(async () => (await job.getState()) === 'completed', { timeoutMs: 20_000, message: 'the job retried from the board did not complete' });
    expect((await t.platform.ctx.queues.queue('maintenance').getJob(job.id!))!.returnvalue).toBe('fixed');
    await page.close();
  });
});
