/**
 * The read side of IPs: the JSON shapes the API returns (pure). The queries behind them are the
 * IP store's (src/crawl-scheduling/ip-store.ts: the rows) and the results store's (result-store.ts:
 * hourly stats, alerts, item snapshots, leaderboards).
 */
import type { Alert, Ip, IpStatsHourly, ItemSnapshot } from '../generated/prisma/client.js';

export const LEADERBOARD_TYPES = ['liquidity', 'inflow', 'outflow'] as const;
export type LeaderboardType = (typeof LEADERBOARD_TYPES)[number];
/** A leaderboard is cached as its top entries; `limit` slices it. */
export const LEADERBOARD_DEPTH = 100;
/** Hourly stats and alerts an IP's detail shows. */
export const DETAIL_HOURS = 24;
export const DETAIL_ALERTS = 20;

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

export interface LeaderboardEntry {
  rank: number;
  ipId: number;
  name: string;
  keyword: string;
  inflow: number;
  outflow: number;
  liquidityIndex: number | null;
}
