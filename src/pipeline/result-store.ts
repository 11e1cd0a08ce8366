/**
 * The results store: crawl results' effects in PostgreSQL (processed_results, item_snapshots,
 * ip_stats_hourly, alerts and the IP's crawl fields), written by the result pipeline
 * (process-result.ts), and the retention of processed_results.
 *
 * `persist` writes one crawl result in ONE transaction, so its effects happen once:
 *
 *   1. processed_results row for the task id (ON CONFLICT DO NOTHING: none inserted → the
 *      result was persisted before → nothing else is written; a concurrent duplicate waits
 *      on the row and then sees it)
 *   2. the IP row, locked (serialises weight updates of one IP); first-crawl detection on it
 *      (first-crawl.ts): a baseline crawl writes the snapshots and the IP's times and counts
 *      nothing (steps 4 and 5 skipped, weight unchanged)
 *   3. item snapshots: INSERT .. SELECT FROM unnest(..) ON CONFLICT DO UPDATE, 1000 rows a
 *      statement (an older crawl never overwrites a newer sighting)
 *   4. the hour's stats: one accumulating INSERT .. ON CONFLICT DO UPDATE (inflow/outflow and
 *      price sums added, liquidity and average recomputed from the sums)
 *   5. alerts of the hour (ON CONFLICT DO NOTHING: once per IP, rule and hour)
 *   6. the IP's weight, interval, lastCrawledAt and nextCrawlAt
 *
 * Uses a pg client from the pool directly (set-based statements with array parameters), in the
 * platform's transaction helper (src/db/transaction.ts); nothing inside the transaction waits on
 * another connection (a pool exhausted by transactions that each wait for a second connection
 * would deadlock).
 */
import type pg from 'pg';
import { inTransaction } from '../db/transaction.js';
import { evaluateAlerts, type AlertCandidate, type AlertThresholds } from './alert-rules.js';
import { intervalSeconds, nextWeight, type IntervalRules, type WeightRules } from './crawl-interval.js';
import { isBaselineCrawl } from './first-crawl.js';
import type { ResultSummary, Transition } from './state-machine.js';
import type { CrawledItem } from '../queues/declarations/crawl.js';

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
  constructor(private readonly pool: pg.Pool) {}

  /** Steps 1 to 6 above, in one transaction; a duplicate or a missing IP leaves nothing behind. */
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
}

async function persistInTransaction(client: pg.PoolClient, input: PersistInput, rules: PersistRules, now: number): Promise<PersistOutcome> {
  const { taskId, ipId, summary } = input;
  const crawledAt = new Date(input.crawledAt);

  const claimed = await client.query(
    `INSERT INTO processed_results (task_id, ip_id, item_count) VALUES ($1, $2, $3)
     ON CONFLICT (task_id) DO NOTHING RETURNING task_id`,
    [taskId, ipId, input.items.length],
  );
  if (claimed.rowCount === 0) return { kind: 'duplicate' };

  const ipRows = await client.query<{ keyword: string; active: boolean; weight: number; last_crawled_at: Date | null }>(
    'SELECT keyword, active, weight, last_crawled_at FROM ips WHERE id = $1 FOR UPDATE',
    [ipId],
  );
  const ipRow = ipRows.rows[0];
  if (!ipRow) return { kind: 'ip_missing' };
  const baseline = isBaselineCrawl(ipRow.last_crawled_at, input.crawledAt, rules.itemTtlOnSaleSeconds);

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

  const weight = baseline ? Number(ipRow.weight) : nextWeight(Number(ipRow.weight), summary, rules);
  const interval = intervalSeconds(weight, rules);
  const nextCrawlAt = ipRow.active ? new Date(Math.max(now, input.crawledAt + interval * 1000)) : null;
  await client.query(
    `UPDATE ips SET weight = $2, interval_seconds = $3,
            last_crawled_at = GREATEST(COALESCE(last_crawled_at, $4::timestamptz), $4::timestamptz),
            next_crawl_at = $5, updated_at = now()
      WHERE id = $1`,
    [ipId, weight, interval, crawledAt, nextCrawlAt],
  );

  return {
    kind: 'persisted',
    ip: { id: ipId, keyword: ipRow.keyword, active: ipRow.active, weight, intervalSeconds: interval, nextCrawlAt },
    baseline,
    ...counted,
  };
}

/** Steps 4 and 5: the hour's stats and its alerts. */
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
