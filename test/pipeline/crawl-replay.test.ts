/**
 * The crawl flow when something fails, and replays of its dead jobs (CrawlScheduler.replay, what
 * the dead-job console calls), with a stand-in crawler that counts its crawls:
 *
 * - the processing of a result that fails (the database refuses it) is retried on its own: the
 *   crawl ran once, the result is counted once;
 * - a result whose processing failed for good is a dead job; its IP was rescheduled; replayed,
 *   it is processed from the result its crawl left (no second crawl) and the IP keeps one pending crawl;
 * - a crawl that failed for good is a dead job; replayed, the IP's current crawl runs now, never
 *   a second pending crawl beside it, and the dead job leaves the failed set.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wirePipeline } from '../../src/pipeline/wiring.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { waitFor } from '../support/wait.js';
import { CrawlQueues, onSale, startStandInCrawler } from './helpers.js';

describe('crawl flow failures and replays', () => {
  let t: TestPlatform;
  let q: CrawlQueues;
  let crawler: ReturnType<typeof startStandInCrawler>;
  const crawls = new Map<number, number>();
  /** IPs whose keyword starts with broken- fail to crawl, until healed. */
  const healed = new Set<number>();
  const sql = async <T = any>(text: string, params: unknown[] = []) => (await t.platform.ctx.db.pool.query(text, params)).rows as T[];

  beforeAll(async () => {
    t = await startTestPlatform({ roles: ['pipeline', 'api'], env: { JOB_ATTEMPTS: '3', JOB_BACKOFF_MS: '50' } });
    q = new CrawlQueues(t.redis.url);
    crawler = startStandInCrawler(t.redis.url, (job) => {
      crawls.set(job.data.ipId, (crawls.get(job.data.ipId) ?? 0) + 1);
      if (job.data.keyword.startsWith('broken-') && !healed.has(job.data.ipId)) throw new Error(`marketplace unreachable for IP ${job.data.ipId}`);
      return [onSale(`${job.data.ipId}-a`, 100)];
    });
    // The database refuses the results of IPs by keyword (decided by the IP row, which exists
    // before its first crawl): `refuse-always-*` until the IP is listed in test_healed,
    // `refuse-twice-*` its first two times (a sequence: not rolled back with the refused statement).
    await sql(`CREATE TABLE test_healed (ip_id int PRIMARY KEY)`);
    await sql(`CREATE SEQUENCE test_refuse_seq`);
    await sql(`CREATE FUNCTION test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$ DECLARE kw text; BEGIN
      SELECT keyword INTO kw FROM ips WHERE id = NEW.ip_id;
      IF kw LIKE 'refuse-always-%' AND NOT EXISTS (SELECT 1 FROM test_healed WHERE ip_id = NEW.ip_id) THEN RAISE EXCEPTION 'refused by a test trigger'; END IF;
      IF kw LIKE 'refuse-twice-%' AND nextval('test_refuse_seq') <= 2 THEN RAISE EXCEPTION 'refused once more by a test trigger'; END IF;
      RETURN NEW; END $$`);
    await sql(`CREATE TRIGGER test_refuse BEFORE INSERT ON processed_results FOR EACH ROW EXECUTE FUNCTION test_refuse()`);
  });
  afterAll(async () => {
    await crawler?.close();
    await q?.close();
    await t?.stop();
  });

  const createIp = async (name: string) => (await t.api.post('/api/ips', { name, keyword: name })).body as { id: number; currentCrawl: { taskId: string } };
  const resultJob = (taskId: string) => q.results.getJob(`result-${taskId}`);

  it('retries a failing persist on its own: the crawl ran once, its result counted once', async () => {
    const ip = await createIp('refuse-twice-1');
    const taskId = ip.currentCrawl.taskId;
    await waitFor(async () => (await q.results.getJobState(`result-${taskId}`)) === 'completed', { message: 'result not processed' });
    const done = (await resultJob(taskId))!;
    expect(done.attemptsMade).toBe(3); // refused twice, then processed
    expect(done.returnvalue).toMatchObject({ status: 'processed', taskId });
    expect(crawls.get(ip.id)).toBe(1);
    expect((await q.crawl.getJob(taskId))!.attemptsMade).toBe(1);
    expect(await sql('SELECT task_id FROM processed_results WHERE ip_id = $1', [ip.id])).toEqual([{ task_id: taskId }]);
    expect((await q.pendingFor(ip.id)).map((j) => j.id)).toEqual([done.returnvalue.nextTaskId]);
  });

  it('replays a dead result from the result its crawl left: counted once, no second crawl, one pending crawl', async () => {
    const ip = await createIp('refuse-always-1');
    const taskId = ip.currentCrawl.taskId;
    await waitFor(async () => (await q.results.getJobState(`result-${taskId}`)) === 'failed', { message: 'result did not fail for good' });
    // Failed for good: the IP was rescheduled at its interval meanwhile.
    const next = await waitFor(
      async () => {
        const c = await q.chain(ip.id);
        return c && c !== taskId ? c : undefined;
      },
      { message: 'not rescheduled after the dead result' },
    );
    expect((await q.pendingFor(ip.id)).map((j) => j.id)).toEqual([next]);
    expect(await sql('SELECT task_id FROM processed_results WHERE ip_id = $1', [ip.id])).toEqual([]);

    await sql(`INSERT INTO test_healed VALUES ($1)`, [ip.id]);
    const replay = await wirePipeline(t.platform.ctx).scheduler.replay('crawl-result', `result-${taskId}`);
    expect(replay).toEqual({ jobId: `result-${taskId}`, status: 'retried', taskId: `result-${taskId}` });
    await waitFor(async () => (await q.results.getJobState(`result-${taskId}`)) === 'completed', { message: 'replayed result not processed' });
    const done = (await resultJob(taskId))!;
    expect(done.returnvalue).toMatchObject({ status: 'processed', taskId, nextTaskId: next });
    expect(done.attemptsMade).toBe(1); // its attempts started again
    expect(crawls.get(ip.id)).toBe(1); // the browser never ran again
    expect(await sql('SELECT task_id FROM processed_results WHERE ip_id = $1', [ip.id])).toEqual([{ task_id: taskId }]);
    expect(await q.chain(ip.id)).toBe(next);
    expect((await q.pendingFor(ip.id)).map((j) => j.id)).toEqual([next]);
  });

  it("replays a dead crawl as its IP's current crawl, now: never a second pending crawl", async () => {
    const ip = await createIp('broken-crawl');
    const taskId = ip.currentCrawl.taskId;
    await waitFor(async () => (await q.crawl.getJobState(taskId)) === 'failed', { message: 'crawl did not fail for good' });
    // The chain moves on first and its next crawl is added right after (crawl-scheduler advance):
    // wait for both.
    const next = await waitFor(
      async () => {
        const c = await q.chain(ip.id);
        return c && c !== taskId && (await q.pendingFor(ip.id)).some((j) => j.id === c) ? c : undefined;
      },
      { message: 'not rescheduled after the dead crawl' },
    );
    const pending = await q.pendingFor(ip.id);
    expect(pending.map((j) => j.id)).toEqual([next]);
    expect(await pending[0]!.getState()).toBe('delayed'); // at its interval, two hours away
    expect(crawls.get(ip.id)).toBe(3);

    healed.add(ip.id);
    const replay = await wirePipeline(t.platform.ctx).scheduler.replay('crawl', taskId);
    expect(replay).toEqual({ jobId: taskId, status: 'crawl_now', taskId: next, crawl: 'moved_forward' });
    expect(await q.crawl.getJob(taskId)).toBeUndefined(); // out of the failed set
    // The pending crawl now runs: crawled once more, processed, and the IP again has one pending crawl.
    await waitFor(async () => (await q.results.getJobState(`result-${next}`)) === 'completed', { message: 'the replayed crawl was not processed' });
    expect(crawls.get(ip.id)).toBe(4);
    const after = (await resultJob(next))!.returnvalue;
    expect(after).toMatchObject({ status: 'processed', taskId: next });
    expect((await q.pendingFor(ip.id)).map((j) => j.id)).toEqual([after.nextTaskId]);

    // A dead job that is not failed any more cannot be replayed.
    await expect(wirePipeline(t.platform.ctx).scheduler.replay('crawl', next)).rejects.toThrow(/not failed/);
  });
});
