/**
 * The ips table, and what the API reads about an IP (its hourly stats, alerts and item
 * snapshots, written by the result pipeline: result-store.ts): the pipeline domain's IP store.
 * Views of the rows are in ip-queries.ts.
 */
import type { Database, PrismaClient } from '../db/client.js';
import type { Ip } from '../generated/prisma/client.js';
import {
  alertView,
  DETAIL_ALERTS,
  DETAIL_HOURS,
  hourlyStatsView,
  ipView,
  itemView,
  LEADERBOARD_DEPTH,
  type IpDetail,
  type LeaderboardEntry,
  type LeaderboardType,
} from './ip-queries.js';

/** What reconciliation needs of every IP. */
export interface IpSchedule {
  id: number;
  keyword: string;
  active: boolean;
  interval_seconds: number;
  last_crawled_at: Date | null;
}

export type IpFields = Partial<Pick<Ip, 'name' | 'keyword' | 'weight' | 'intervalSeconds' | 'active' | 'nextCrawlAt'>>;

export class IpStore {
  private readonly prisma: PrismaClient;
  private readonly pool: Database['pool'];

  constructor(db: Pick<Database, 'prisma' | 'pool'>) {
    this.prisma = db.prisma;
    this.pool = db.pool;
  }

  find(id: number): Promise<Ip | null> {
    return this.prisma.ip.findUnique({ where: { id } });
  }

  create(ip: Pick<Ip, 'name' | 'keyword' | 'weight' | 'intervalSeconds'>): Promise<Ip> {
    return this.prisma.ip.create({ data: ip });
  }

  async list(q: { active?: boolean; limit: number; offset: number }): Promise<{ rows: Ip[]; total: number }> {
    const where = q.active === undefined ? {} : { active: q.active };
    const [rows, total] = await Promise.all([
      this.prisma.ip.findMany({ where, orderBy: { id: 'asc' }, take: q.limit, skip: q.offset }),
      this.prisma.ip.count({ where }),
    ]);
    return { rows, total };
  }

  update(id: number, fields: IpFields): Promise<Ip> {
    return this.prisma.ip.update({ where: { id }, data: fields });
  }

  async delete(id: number): Promise<void> {
    await this.prisma.ip.deleteMany({ where: { id } });
  }

  /** Every IP, with what reconciliation needs (one statement, no Prisma objects: 100,000 rows). */
  async schedules(): Promise<IpSchedule[]> {
    const { rows } = await this.pool.query<IpSchedule>('SELECT id, keyword, active, interval_seconds, last_crawled_at FROM ips');
    return rows;
  }

  /** Writes the planned next crawl times to the IPs (informational; the job's delay is the truth). */
  async recordNextCrawl(entries: readonly { ipId: number; dueAt: number }[]): Promise<void> {
    for (let i = 0; i < entries.length; i += 5000) {
      const part = entries.slice(i, i + 5000);
      await this.pool.query(
        `UPDATE ips SET next_crawl_at = u.due, updated_at = now()
           FROM unnest($1::int[], $2::timestamptz[]) AS u(id, due) WHERE ips.id = u.id`,
        [part.map((e) => e.ipId), part.map((e) => new Date(e.dueAt))],
      );
    }
  }

  // --- what the API reads ------------------------------------------------------------------

  async detail(id: number): Promise<IpDetail | null> {
    const ip = await this.prisma.ip.findUnique({ where: { id } });
    if (!ip) return null;
    const [stats, alerts] = await Promise.all([
      this.prisma.ipStatsHourly.findMany({ where: { ipId: id }, orderBy: { hourBucket: 'desc' }, take: DETAIL_HOURS }),
      this.prisma.alert.findMany({ where: { ipId: id }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: DETAIL_ALERTS }),
    ]);
    return { ...ipView(ip), hourlyStats: stats.map(hourlyStatsView), alerts: alerts.map(alertView) };
  }

  async items(ipId: number, q: { status?: 'on_sale' | 'sold'; limit: number; offset: number }) {
    const where = { ipId, ...(q.status ? { status: q.status } : {}) };
    const [rows, total] = await Promise.all([
      this.prisma.itemSnapshot.findMany({ where, orderBy: [{ lastSeenAt: 'desc' }, { id: 'desc' }], take: q.limit, skip: q.offset }),
      this.prisma.itemSnapshot.count({ where }),
    ]);
    return { total, items: rows.map(itemView) };
  }

  /** IPs ranked over the last `hours` hour buckets (the current one included). */
  async leaderboard(type: LeaderboardType, hours: number): Promise<LeaderboardEntry[]> {
    const order = { liquidity: 'liquidity', inflow: 'inflow', outflow: 'outflow' }[type];
    const { rows } = await this.pool.query<{ ip_id: number; name: string; keyword: string; inflow: string; outflow: string; liquidity: string | null }>(
      `SELECT s.ip_id, i.name, i.keyword, sum(s.inflow) AS inflow, sum(s.outflow) AS outflow,
              CASE WHEN sum(s.inflow) > 0 THEN round(sum(s.outflow)::numeric / sum(s.inflow), 4) END AS liquidity
         FROM ip_stats_hourly s JOIN ips i ON i.id = s.ip_id
        WHERE s.hour_bucket >= date_trunc('hour', now()) - make_interval(hours => $1::int - 1)
        GROUP BY s.ip_id, i.name, i.keyword
        ORDER BY ${order} DESC NULLS LAST, s.ip_id
        LIMIT $2`,
      [hours, LEADERBOARD_DEPTH],
    );
    return rows.map((r, i) => ({
      rank: i + 1,
      ipId: r.ip_id,
      name: r.name,
      keyword: r.keyword,
      inflow: Number(r.inflow),
      outflow: Number(r.outflow),
      liquidityIndex: r.liquidity === null ? null : Number(r.liquidity),
    }));
  }

  /**
   * Active IPs, and those of them not crawled for more than twice their interval (never crawled:
   * counted from their creation): what the `IpCrawlOverdue` alert watches. One aggregate query.
   */
  async crawlHealth(): Promise<{ active: number; overdue: number }> {
    const rows = await this.pool.query<{ active: string; overdue: string }>(
      `SELECT count(*) FILTER (WHERE active) AS active,
              count(*) FILTER (WHERE active AND coalesce(last_crawled_at, created_at) < now() - make_interval(secs => 2 * interval_seconds)) AS overdue
         FROM ips`,
    );
    return { active: Number(rows.rows[0]!.active), overdue: Number(rows.rows[0]!.overdue) };
  }
}
