/**
 * The results store: the tables a crawl result writes (processed_results, item_snapshots,
 * ip_stats_hourly, alerts) and what the API reads of them; the IP row itself is the IP store's
 * (src/crawl-scheduling/ip-store.ts), called inside the result's transaction.
 *
 * Invariant: `persist` writes one result in ONE transaction that starts with its processed_results
 * row (ON CONFLICT DO NOTHING: a result persisted before writes nothing else), so its effects
 * happen once (steps 1 to 5 of docs/pipeline.md#the-pipeline-per-result). Nothing inside the
 * transaction waits on another connection of the pool (src/db/transaction.ts).
 */
import type pg from 'pg';
import { IpStore } from '../crawl-scheduling/ip-store.js';
import { intervalSeconds, nextWeight, type IntervalRules, type WeightRules } from '../crawl-scheduling/crawl-interval.js';
import type { Database, PrismaClient } from '../db/client.js';
import { inTransaction } from '../db/transaction.js';
import { evaluateAlerts, type AlertCandidate, type AlertThresholds } from './alert-rules.js';
import { isBaselineCrawl } from './first-crawl.js';
import {
  alertView,
  DETAIL_ALERTS,
  DETAIL_HOURS,
  hourlyStatsView,
  itemView,
  LEADERBOARD_DEPTH,
  type IpDetail,
  type LeaderboardEntry,
  type LeaderboardType,
} from './ip-queries.js';
import type { ResultSummary, Transition } from './state-machine.js';
import type { CrawledItem } from '../queues/payloads/crawl.js';

export interface PersistInput {
  taskId: string;
  ipId: number;
  crawledAt: number;
  items: readonly { item: CrawledItem; transition: Transition }[];
  summary: ResultSummary;
}

export type PersistRules = WeightRules & IntervalRules & AlertThresholds & { alertBaselineHours: number; itemTtlOnSaleSeconds: number };

export interface PersistedIp {
  id: number;
  keyword: string;
  active: boolean;
  weight: number;
  intervalSeconds: number;
  nextCrawlAt: Date | null;
}

export type PersistOutcome =
  | { kind: 'duplicate' }
  | { kind: 'ip_missing' }
  | {
      kind: 'persisted';
      ip: PersistedIp;
      /** The IP's first crawl (or first after its item states expired): recorded, nothing counted. */
      baseline: boolean;
      /** The hour's stats after this result; null for a baseline crawl. */
      hour: { bucket: Date; inflow: number; outflow: number } | null;
      alerts: AlertCandidate[];
    };

const SNAPSHOT_CHUNK = 1000;
const HOUR_MS = 3_600_000;

export function hourBucket(ms: number): Date {
  return new Date(Math.floor(ms / HOUR_MS) * HOUR_MS);
}

export class ResultStore {
  private readonly prisma: PrismaClient;
  private readonly pool: pg.Pool;

  constructor(db: Pick<Database, 'prisma' | 'pool'>) {
    this.prisma = db.prisma;
    this.pool = db.pool;
  }

  /** The result's effects in one transaction (persistInTransaction); a duplicate or a missing IP leaves nothing behind. */
  persist(input: PersistInput, rules: PersistRules, now = Date.now()): Promise<PersistOutcome> {
    return inTransaction(
      this.pool,
      (client) => persistInTransaction(client, input, rules, now),
      (outcome) => outcome.kind === 'persisted',
    );
  }

  /** Whether the result of `taskId` was persisted (its processed_results row exists). */
  async wasProcessed(taskId: string): Promise<boolean> {
    const { rowCount } = await this.pool.query({
      name: 'pipeline-was-processed',
      text: 'SELECT 1 FROM processed_results WHERE task_id = $1',
      values: [taskId],
    });
    return (rowCount ?? 0) > 0;
  }

  /** Deletes up to `limit` processed task ids recorded before `before`; returns how many. */
  async dropProcessedBefore(before: Date, limit: number): Promise<number> {
    const { rowCount } = await this.pool.query(
      `DELETE FROM processed_results WHERE task_id IN (SELECT task_id FROM processed_results WHERE processed_at < $1 LIMIT ${Math.floor(limit)})`,
      [before],
    );
    return rowCount ?? 0;
  }

  // --- what the API reads ------------------------------------------------------------------

  /** An IP's last DETAIL_HOURS hourly stats and DETAIL_ALERTS latest alerts, newest first (its detail). */
  async recentOf(ipId: number): Promise<Pick<IpDetail, 'hourlyStats' | 'alerts'>> {
    const [stats, alerts] = await Promise.all([
      this.prisma.ipStatsHourly.findMany({ where: { ipId }, orderBy: { hourBucket: 'desc' }, take: DETAIL_HOURS }),
      this.prisma.alert.findMany({ where: { ipId }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: DETAIL_ALERTS }),
    ]);
    return { hourlyStats: stats.map(hourlyStatsView), alerts: alerts.map(alertView) };
  }

  /** An IP's item snapshots, most recently seen first. */
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
}

async function persistInTransaction(client: pg.PoolClient, input: PersistInput, rules: PersistRules, now: number): Promise<PersistOutcome> {
  const { taskId, ipId, summary } = input;
  const crawledAt = new Date(input.crawledAt);

  // The processed_results row first: none inserted → persisted before (a concurrent duplicate waits on the row, then sees it).
  const claimed = await client.query(
    `INSERT INTO processed_results (task_id, ip_id, item_count) VALUES ($1, $2, $3)
     ON CONFLICT (task_id) DO NOTHING RETURNING task_id`,
    [taskId, ipId, input.items.length],
  );
  if (claimed.rowCount === 0) return { kind: 'duplicate' };

  // The IP locked; a baseline crawl (first-crawl.ts) records snapshots and times and counts nothing.
  const ipRow = await IpStore.lockForResult(client, ipId);
  if (!ipRow) return { kind: 'ip_missing' };
  const baseline = isBaselineCrawl(ipRow.lastCrawledAt, input.crawledAt, rules.itemTtlOnSaleSeconds);

  // Snapshots, SNAPSHOT_CHUNK rows a statement; an older crawl never overwrites a newer sighting.
  for (let i = 0; i < input.items.length; i += SNAPSHOT_CHUNK) {
    const chunk = input.items.slice(i, i + SNAPSHOT_CHUNK);
    await client.query(
      `INSERT INTO item_snapshots
         (ip_id, source_id, title, price, status, image_url, item_url, first_seen_at, last_seen_at, sold_at, updated_at)
       SELECT $1, u.source_id, u.title, u.price, u.status, u.image_url, u.item_url, u.first_seen_at, $9,
              CASE WHEN u.status = 'sold' THEN $9::timestamptz END, now()
         FROM unnest($2::text[], $3::text[], $4::int[], $5::item_status[], $6::text[], $7::text[], $8::timestamptz[])
              AS u(source_id, title, price, status, image_url, item_url, first_seen_at)
       ON CONFLICT (ip_id, source_id) DO UPDATE SET
         title = EXCLUDED.title,
         price = EXCLUDED.price,
         status = EXCLUDED.status,
         image_url = EXCLUDED.image_url,
         item_url = EXCLUDED.item_url,
         first_seen_at = LEAST(item_snapshots.first_seen_at, EXCLUDED.first_seen_at),
         last_seen_at = EXCLUDED.last_seen_at,
         sold_at = CASE WHEN EXCLUDED.status = 'sold' THEN COALESCE(item_snapshots.sold_at, EXCLUDED.sold_at) END,
         updated_at = now()
       WHERE item_snapshots.last_seen_at <= EXCLUDED.last_seen_at`,
      [
        ipId,
        chunk.map((e) => e.item.sourceId),
        chunk.map((e) => e.item.title),
        chunk.map((e) => e.item.price),
        chunk.map((e) => e.item.status),
        chunk.map((e) => e.item.imageUrl),
        chunk.map((e) => e.item.itemUrl),
        chunk.map((e) => new Date(e.transition.firstSeen)),
        crawledAt,
      ],
    );
  }

  const counted = baseline ? { hour: null, alerts: [] } : await countResult(client, input, rules);

  const weight = baseline ? ipRow.weight : nextWeight(ipRow.weight, summary, rules);
  const interval = intervalSeconds(weight, rules);
  const nextCrawlAt = ipRow.active ? new Date(Math.max(now, input.crawledAt + interval * 1000)) : null;
  await IpStore.recordCrawl(client, ipId, { weight, intervalSeconds: interval, crawledAt, nextCrawlAt });

  return {
    kind: 'persisted',
    ip: { id: ipId, keyword: ipRow.keyword, active: ipRow.active, weight, intervalSeconds: interval, nextCrawlAt },
    baseline,
    ...counted,
  };
}

/** The hour's stats (one accumulating upsert) and its alerts (once per IP, rule and hour); skipped by a baseline crawl. */
async function countResult(
  client: pg.PoolClient,
  input: PersistInput,
  rules: PersistRules,
): Promise<{ hour: { bucket: Date; inflow: number; outflow: number }; alerts: AlertCandidate[] }> {
  const { ipId, summary } = input;
  const bucket = hourBucket(input.crawledAt);
  const prices = summary.soldPrices;
  const priceSum = prices.reduce((a, b) => a + b, 0);
  const stats = await client.query<{ inflow: number; outflow: number }>(
    `INSERT INTO ip_stats_hourly AS s
       (ip_id, hour_bucket, inflow, outflow, liquidity_index, avg_price, min_price, max_price, price_sum, sample_count, updated_at)
     VALUES ($1, $2, $3::int, $4::int,
             CASE WHEN $3::int > 0 THEN round($4::numeric / $3::int, 4) END,
             CASE WHEN $8::int > 0 THEN round($7::numeric / $8::int, 2) END,
             $5::int, $6::int, $7::bigint, $8::int, now())
     ON CONFLICT (ip_id, hour_bucket) DO UPDATE SET
       inflow = s.inflow + EXCLUDED.inflow,
       outflow = s.outflow + EXCLUDED.outflow,
       liquidity_index = CASE WHEN s.inflow + EXCLUDED.inflow > 0
                              THEN round((s.outflow + EXCLUDED.outflow)::numeric / (s.inflow + EXCLUDED.inflow), 4) END,
       price_sum = s.price_sum + EXCLUDED.price_sum,
       sample_count = s.sample_count + EXCLUDED.sample_count,
       avg_price = CASE WHEN s.sample_count + EXCLUDED.sample_count > 0
                        THEN round((s.price_sum + EXCLUDED.price_sum)::numeric / (s.sample_count + EXCLUDED.sample_count), 2) END,
       min_price = LEAST(s.min_price, EXCLUDED.min_price),
       max_price = GREATEST(s.max_price, EXCLUDED.max_price),
       updated_at = now()
     RETURNING inflow, outflow`,
    [
      ipId,
      bucket,
      summary.inflow,
      summary.outflow,
      prices.length ? Math.min(...prices) : null,
      prices.length ? Math.max(...prices) : null,
      priceSum,
      prices.length,
    ],
  );
  const hour = { bucket, inflow: Number(stats.rows[0]!.inflow), outflow: Number(stats.rows[0]!.outflow) };

  const baseline = await client.query<{ avg: string | null }>(
    `SELECT avg(outflow) AS avg FROM ip_stats_hourly
      WHERE ip_id = $1 AND hour_bucket < $2 AND hour_bucket >= $2::timestamptz - make_interval(hours => $3::int)`,
    [ipId, bucket, rules.alertBaselineHours],
  );
  const baselineOutflow = baseline.rows[0]?.avg == null ? null : Number(baseline.rows[0].avg);
  const candidates = evaluateAlerts(hour, baselineOutflow, rules);
  let alerts: AlertCandidate[] = [];
  if (candidates.length) {
    const inserted = await client.query<{ rule: string }>(
      `INSERT INTO alerts (ip_id, rule, hour_bucket, severity, message, value, threshold)
       SELECT $1, u.rule, $2, u.severity, u.message, u.value, u.threshold
         FROM unnest($3::text[], $4::text[], $5::text[], $6::float8[], $7::float8[]) AS u(rule, severity, message, value, threshold)
       ON CONFLICT (ip_id, rule, hour_bucket) DO NOTHING RETURNING rule`,
      [
        ipId,
        bucket,
        candidates.map((a) => a.rule),
        candidates.map((a) => a.severity),
        candidates.map((a) => a.message),
        candidates.map((a) => a.value),
        candidates.map((a) => a.threshold),
      ],
    );
    const fired = new Set(inserted.rows.map((r) => r.rule));
    alerts = candidates.filter((a) => fired.has(a.rule));
  }

  return { hour, alerts };
}
