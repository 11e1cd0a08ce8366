/**
 * What the API does with IPs: create, list, read (through the caches), update, delete, trigger a
 * crawl, list items, leaderboards. Each change keeps the IP's crawl chain in step: created or
 * activated → first crawl scheduled; deactivated or deleted → pending crawl removed; weight
 * changed → interval recomputed and the pending crawl moved.
 */
import { InvalidStateError, NotFoundError } from '../errors.js';
import type { Ip } from '../generated/prisma/client.js';
import { intervalSeconds } from '../crawl-scheduling/crawl-interval.js';
import type { CrawlNowStatus, CrawlScheduler } from '../crawl-scheduling/crawl-scheduler.js';
import { plannedDue } from '../crawl-scheduling/due-times.js';
import type { IpStore } from '../crawl-scheduling/ip-store.js';
import { ipView, LEADERBOARD_DEPTH, type IpDetail, type LeaderboardType } from './ip-queries.js';
import type { PipelineCaches } from './pipeline-caches.js';
import type { ResultStore } from './result-store.js';
import type { PipelineSettings } from './settings.js';

export interface IpServiceDeps {
  ips: IpStore;
  results: ResultStore;
  scheduler: CrawlScheduler;
  caches: PipelineCaches;
  settings: PipelineSettings;
}

export interface IpPatch {
  name?: string;
  keyword?: string;
  weight?: number;
  active?: boolean;
}

export class IpService {
  constructor(private readonly deps: IpServiceDeps) {}

  private async find(id: number): Promise<Ip> {
    const ip = await this.deps.ips.find(id);
    if (!ip) throw new NotFoundError('ip_not_found', `no IP with id ${id}`, { field: 'id' });
    return ip;
  }

  async create(input: { name: string; keyword: string; weight?: number }) {
    const weight = input.weight ?? 1;
    const ip = await this.deps.ips.create({ name: input.name, keyword: input.keyword, weight, intervalSeconds: intervalSeconds(weight, this.deps.settings) });
    let scheduled: Awaited<ReturnType<CrawlScheduler['scheduleMany']>>;
    try {
      scheduled = await this.deps.scheduler.scheduleMany([{ id: ip.id, keyword: ip.keyword, dueAt: Date.now() }]);
    } catch (err) {
      // No first crawl (Redis unreachable, or its replicas did not confirm the claim under
      // REDIS_REPLICA_ACKS): the IP is taken back, so that the error (a 503) leaves nothing behind
      // and the client's retry creates it once. A claim that reached Redis all the same is the
      // entry of a missing IP, which the reconciliation releases (as after a delete).
      await this.deps.ips.delete(ip.id).catch(() => undefined);
      throw err;
    }
    // The answer names the first crawl this created, even when a fast crawler has finished it and
    // moved the chain on by the time the answer is written.
    const first = scheduled.get(ip.id);
    const fresh = await this.find(ip.id);
    if (!first) return this.withCrawl(fresh);
    return { ...ipView(fresh), currentCrawl: await this.deps.scheduler.crawlView(first).catch(() => null) };
  }

  async list(q: { active?: boolean; limit: number; offset: number }) {
    const { rows, total } = await this.deps.ips.list(q);
    return { total, ips: rows.map(ipView) };
  }

  /** The cached detail plus the live state of the IP's current crawl. */
  async detail(id: number) {
    const { value, cached } = await this.deps.caches.ipDetail(id, () => this.loadDetail(id));
    if (!value) throw new NotFoundError('ip_not_found', `no IP with id ${id}`, { field: 'id' });
    return { body: { ...value, currentCrawl: await this.deps.scheduler.currentCrawl(id).catch(() => null) }, cached };
  }

  async update(id: number, patch: IpPatch) {
    const { scheduler, settings } = this.deps;
    const before = await this.find(id);
    const weight = patch.weight ?? before.weight;
    const interval = intervalSeconds(weight, settings);
    const active = patch.active ?? before.active;
    const ip = await this.deps.ips.update(id, {
      ...(patch.name !== undefined ? { name: patch.name } : {}),
      ...(patch.keyword !== undefined ? { keyword: patch.keyword } : {}),
      weight,
      intervalSeconds: interval,
      active,
      ...(active ? {} : { nextCrawlAt: null }),
    });
    if (!active && before.active) {
      await scheduler.unschedule(id);
    } else if (active && !before.active) {
      await scheduler.scheduleMany([{ id, keyword: ip.keyword, dueAt: plannedDue(ip, Date.now()) }]);
    } else if (active) {
      if (patch.keyword !== undefined && patch.keyword !== before.keyword) await scheduler.updateKeyword(id, ip.keyword);
      if (interval !== before.intervalSeconds && ip.lastCrawledAt) {
        const dueAt = plannedDue(ip, Date.now());
        if (await scheduler.moveDue(id, dueAt)) await scheduler.recordNextCrawl([{ ipId: id, dueAt }]);
      }
    }
    await Promise.all([this.deps.caches.invalidateIp(id), this.deps.caches.invalidateLeaderboards()]);
    return this.withCrawl(await this.find(id));
  }

  async remove(id: number): Promise<void> {
    await this.find(id);
    // Row first, chain second: reconciliation releases the entry of a missing IP if we die in between.
    await this.deps.ips.delete(id);
    await this.deps.scheduler.unschedule(id);
    await Promise.all([this.deps.caches.invalidateIp(id), this.deps.caches.invalidateLeaderboards()]);
  }

  async crawlNow(id: number): Promise<{ task_id: string; status: CrawlNowStatus }> {
    const ip = await this.find(id);
    if (!ip.active) throw new InvalidStateError('ip_inactive', `IP ${id} is inactive; activate it (PATCH active: true) to crawl it`, { field: 'id' });
    // The scheduler records the new next crawl and invalidates the cached detail (recordNextCrawl).
    const { taskId, status } = await this.deps.scheduler.crawlNow(ip);
    return { task_id: taskId, status };
  }

  async items(id: number, q: { status?: 'on_sale' | 'sold'; limit: number; offset: number }) {
    await this.find(id);
    return { ipId: id, ...(q.status ? { status: q.status } : {}), ...(await this.deps.results.items(id, q)) };
  }

  async leaderboard(type: LeaderboardType, hours: number, limit: number) {
    const { value, cached } = await this.deps.caches.leaderboard(type, hours, () => this.deps.results.leaderboard(type, hours));
    return { body: { type, hours, entries: value.slice(0, Math.min(limit, LEADERBOARD_DEPTH)) }, cached };
  }

  /** The detail the cache holds: the IP, its recent hourly stats and alerts; null when there is no such IP. */
  private async loadDetail(id: number): Promise<IpDetail | null> {
    const ip = await this.deps.ips.find(id);
    if (!ip) return null;
    return { ...ipView(ip), ...(await this.deps.results.recentOf(id)) };
  }

  private async withCrawl(ip: Ip) {
    return { ...ipView(ip), currentCrawl: await this.deps.scheduler.currentCrawl(ip.id).catch(() => null) };
  }
}
