/**
 * Reconciliation of the IPs in the DB with the crawl chains and BullMQ (the leader's
 * `crawl-reconcile` maintenance task, when it takes over and every SCHEDULER_RECONCILE_INTERVAL;
 * reference: marketplace-crawler.md 2.6 and the janitor of 7.2, whose other half BullMQ's
 * stalled-job check does).
 *
 * Afterwards: every active IP has a chain entry whose crawl is pending, running or in the
 * pipeline; no inactive or deleted IP has an entry or a pending crawl; no pending crawl job
 * exists that is not its IP's current link.
 *
 * Reads happen in this order, so that concurrent API calls and pipeline workers cannot make it
 * undo their work: job sets → chain entries → DB. An entry is always written before its job is
 * added and an IP row before its entry, so a job seen is backed by an entry read later (unless
 * that entry moved on, which makes the job an orphan), and an entry seen is backed by the IP row
 * read later. Everything it changes goes through the same compare-and-set moves as everyone else.
 */
import type { Logger } from '../logging/logger.js';
import type { RedisClient } from '../redis/connection.js';
import type { IpSchedule, IpStore } from './ip-store.js';
import type { CrawlScheduler } from './crawl-scheduler.js';
import { plannedDue, spreadDueTimes } from './due-times.js';
import { ipIdOfTask } from './task-ids.js';

export interface ReconcileReport {
  activeIps: number;
  scheduled: number;
  reAdded: number;
  advanced: number;
  orphansRemoved: number;
  released: number;
  ms: number;
}

export interface ReconcileDeps {
  scheduler: CrawlScheduler;
  ips: Pick<IpStore, 'schedules'>;
  redis: RedisClient;
  logger: Logger;
  spreadSeconds: number;
  /** Every crawl it adds is delayed at least this long, so the backpressure loop sees it before BullMQ promotes it. */
  leadMs: number;
  /** Stops a long reconciliation early at shutdown (the next one finishes the work). */
  signal?: AbortSignal;
}

export async function reconcile(deps: ReconcileDeps): Promise<ReconcileReport> {
  const started = performance.now();
  const { scheduler, redis } = deps;
  const report: ReconcileReport = { activeIps: 0, scheduled: 0, reAdded: 0, advanced: 0, orphansRemoved: 0, released: 0, ms: 0 };

  // 1. Crawl jobs in flight, by IP (ids carry the IP: no job is loaded), in every partition of
  // every layout still in use.
  const perQueue = await Promise.all(
    scheduler.queues().map(async (queue) => {
      const k = queue.keys;
      const [delayed, waiting, paused, prioritized, active] = await Promise.all([
        redis.zrange(k.delayed!, '0', '-1'),
        redis.lrange(k.wait!, '0', '-1'),
        redis.lrange(k.paused!, '0', '-1'),
        redis.zrange(k.prioritized!, '0', '-1'),
        redis.lrange(k.active!, '0', '-1'),
      ]);
      return { inFlight: [...delayed, ...waiting, ...paused, ...prioritized, ...active], active };
    }),
  );
  const activeJobs = new Set(perQueue.flatMap((q) => q.active));
  const jobsByIp = new Map<number, string[]>();
  for (const id of perQueue.flatMap((q) => q.inFlight)) {
    const ipId = ipIdOfTask(id);
    if (ipId === undefined) continue;
    const list = jobsByIp.get(ipId);
    if (list) list.push(id);
    else jobsByIp.set(ipId, [id]);
  }

  // 2. Chain entries.
  const chains = await scheduler.chain.all();

  // 3. IPs.
  const ips = new Map((await deps.ips.schedules()).map((r) => [r.id, r]));

  // Pending jobs that are not their IP's current link: orphans (a crash between releasing an
  // entry and removing its job, or a job added by hand). Re-checked one by one before removal.
  for (const [ipId, jobIds] of jobsByIp) {
    for (const jobId of jobIds) {
      if (chains.get(ipId) === jobId || activeJobs.has(jobId)) continue;
      if ((await scheduler.chain.current(ipId)) === jobId) continue;
      if (await scheduler.removeIfPending(jobId)) report.orphansRemoved += 1;
    }
  }

  // Entries of IPs that are inactive or gone.
  for (const [ipId, taskId] of chains) {
    if (ips.get(ipId)?.active) continue;
    const released = await scheduler.chain.release(ipId, taskId);
    if (released) {
      await scheduler.removeIfPending(released);
      report.released += 1;
    }
  }

  const now = Date.now();
  const unscheduled: IpSchedule[] = [];
  const toCheck: { ip: IpSchedule; taskId: string }[] = [];
  for (const ip of ips.values()) {
    if (!ip.active) continue;
    report.activeIps += 1;
    const taskId = chains.get(ip.id);
    if (!taskId) unscheduled.push(ip);
    else if (!jobsByIp.get(ip.id)?.includes(taskId)) toCheck.push({ ip, taskId });
  }

  // Active IPs without a chain: first crawl at lastCrawledAt + interval, or spread over the
  // next SCHEDULER_SPREAD_SECONDS when that is past or the IP was never crawled.
  if (unscheduled.length) {
    const due = spreadDueTimes(
      unscheduled.map((ip) => ({ ipId: ip.id, lastCrawledAt: ip.last_crawled_at, intervalSeconds: ip.interval_seconds })),
      now,
      deps.spreadSeconds * 1000,
    );
    const scheduled = await scheduler.scheduleMany(
      unscheduled.map((ip) => ({ id: ip.id, keyword: ip.keyword, dueAt: due.get(ip.id)! })),
      { minDelayMs: deps.leadMs, ...(deps.signal ? { signal: deps.signal } : {}) },
    );
    report.scheduled = scheduled.size;
  }

  // Entries whose job is in no pending or active set: in the pipeline (fine), finished with a
  // missed event (advance) or missing (re-add under the same id).
  for (const { ip, taskId } of toCheck) {
    if (deps.signal?.aborted) break;
    const done = await scheduler.repair(
      { id: ip.id, keyword: ip.keyword },
      taskId,
      plannedDue({ lastCrawledAt: ip.last_crawled_at, intervalSeconds: ip.interval_seconds }, now),
    );
    if (done === 're-added') report.reAdded += 1;
    if (done === 'advanced') report.advanced += 1;
  }

  report.ms = Math.round(performance.now() - started);
  const changed = report.scheduled + report.reAdded + report.advanced + report.orphansRemoved + report.released;
  deps.logger[changed ? 'info' : 'debug']({ ...report }, 'crawl schedule reconciled');
  return report;
}
