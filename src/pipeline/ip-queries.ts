/**
 * The read side of IPs: the JSON shapes the API returns and the queries behind them (detail
 * with its last 24 hourly stats and recent alerts, item snapshots, leaderboards).
 */
import type { Database } from '../db/client.js';
import type { Alert, Ip, IpStatsHourly, ItemSnapshot } from '../generated/prisma/client.js';

export const LEADERBOARD_TYPES = ['liquidity', 'inflow', 'outflow'] as const;
export type LeaderboardType = (typeof LEADERBOARD_TYPES)[number];
/** A leaderboard is cached as its top entries; `limit` slices it. */
export const LEADERBOARD_DEPTH = 100;
const DETAIL_HOURS = 24;
const DETAIL_ALERTS = 20;

const iso = (d: Date | null) => (d ? d.toISOString() : null);
const num = (d: { toNumber(): number } | null) => (d === null ? null : d.toNumber());

export function ipView(ip: Ip) {
  return {
    id: ip.id,
    name: ip.name,
    keyword: ip.keyword,
    weight: ip.weight,
    active: ip.active,
    intervalSeconds: ip.intervalSeconds,
    lastCrawledAt: iso(ip.lastCrawledAt),
    nextCrawlAt: iso(ip.nextCrawlAt),
    createdAt: ip.createdAt.toISOString(),
    updatedAt: ip.updatedAt.toISOString(),
  };
}
export type IpView = ReturnType<typeof ipView>;

export function hourlyStatsView(s: IpStatsHourly) {
  return {
    hour: s.hourBucket.toISOString(),
    inflow: s.inflow,
    outflow: s.outflow,
    liquidityIndex: num(s.liquidityIndex),
    avgPrice: num(s.avgPrice),
    minPrice: s.minPrice,
    maxPrice: s.maxPrice,
    sampleCount: s.sampleCount,
  };
}

export function alertView(a: Alert) {
  return {
    id: String(a.id),
    rule: a.rule,
    hour: a.hourBucket.toISOString(),
    severity: a.severity,
    message: a.message,
    value: a.value,
    threshold: a.threshold,
    createdAt: a.createdAt.toISOString(),
  };
}

export function itemView(s: ItemSnapshot) {
  return {
    sourceId: s.sourceId,
    title: s.title,
    price: s.price,
    status: s.status,
    imageUrl: s.imageUrl,
    itemUrl: s.itemUrl,
    firstSeenAt: s.firstSeenAt.toISOString(),
    lastSeenAt: s.lastSeenAt.toISOString(),
    soldAt: iso(s.soldAt),
  };
}

export type IpDetail = IpView & { hourlyStats: ReturnType<typeof hourlyStatsView>[]; alerts: ReturnType<typeof alertView>[] };

export async function loadIpDetail(db: Database, id: number): Promise<IpDetail | null> {
  const ip = await db.prisma.ip.findUnique({ where: { id } });
  if (!ip) return null;
  const [stats, alerts] = await Promise.all([
    db.prisma.ipStatsHourly.findMany({ where: { ipId: id }, orderBy: { hourBucket: 'desc' }, take: DETAIL_HOURS }),
    db.prisma.alert.findMany({ where: { ipId: id }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: DETAIL_ALERTS }),
  ]);
  return { ...ipView(ip), hourlyStats: stats.map(hourlyStatsView), alerts: alerts.map(alertView) };
}

export async function listItems(db: Database, ipId: number, q: { status?: 'on_sale' | 'sold'; limit: number; offset: number }) {
  const where = { ipId, ...(q.status ? { status: q.status } : {}) };
  const [rows, total] = await Promise.all([
    db.prisma.itemSnapshot.findMany({ where, orderBy: [{ lastSeenAt: 'desc' }, { id: 'desc' }], take: q.limit, skip: q.offset }),
    db.prisma.itemSnapshot.count({ where }),
  ]);
  return { total, items: rows.map(itemView) };
}

export interface LeaderboardEntry {
  rank: number;
  ipId: number;
  name: string;
  keyword: string;
  inflow: number;
  outflow: number;
  liquidityIndex: number | null;
}

/** IPs ranked over the last `hours` hour buckets (the current one included). */
export async function loadLeaderboard(db: Database, type: LeaderboardType, hours: number): Promise<LeaderboardEntry[]> {
  const order = { liquidity: 'liquidity', inflow: 'inflow', outflow: 'outflow' }[type];
  const { rows } = await db.pool.query<{ ip_id: number; name: string; keyword: string; inflow: string; outflow: string; liquidity: string | null }>(
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
export async function countCrawlHealth(db: Database): Promise<{ active: number; overdue: number }> {
  const rows = await db.pool.query<{ active: string; overdue: string }>(
    `SELECT count(*) FILTER (WHERE active) AS active,
            count(*) FILTER (WHERE active AND coalesce(last_crawled_at, created_at) < now() - make_interval(secs => 2 * interval_seconds)) AS overdue
       FROM ips`,
  );
  return { active: Number(rows.rows[0]!.active), overdue: Number(rows.rows[0]!.overdue) };
}
