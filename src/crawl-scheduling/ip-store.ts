/**
 * The ips table, its one store: the API's rows (create, list, update, delete), what scheduling
 * reads and records (every IP's schedule, the planned next crawls), and the two statements a crawl
 * result runs on its IP inside the result's transaction (src/pipeline/result-store.ts): the row
 * locked, then its new weight, interval and crawl times.
 */
import type pg from 'pg';
import type { Database, PrismaClient } from '../db/client.js';
import type { Ip } from '../generated/prisma/client.js';

/** What reconciliation needs of every IP. */
export interface IpSchedule {
  id: number;
  keyword: string;
  active: boolean;
  interval_seconds: number;
  last_crawled_at: Date | null;
}

/** What a crawl result reads of its IP, under the row lock. */
export interface IpForResult {
  keyword: string;
  active: boolean;
  weight: number;
  lastCrawledAt: Date | null;
}

/** What a crawl result records on its IP. */
export interface CrawlRecord {
  weight: number;
  intervalSeconds: number;
  crawledAt: Date;
  nextCrawlAt: Date | null;
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

  /** Inside a crawl result's transaction: its IP row, locked (serialises weight updates of one IP); undefined when deleted. */
  static async lockForResult(client: pg.PoolClient, id: number): Promise<IpForResult | undefined> {
    const { rows } = await client.query<{ keyword: string; active: boolean; weight: number; last_crawled_at: Date | null }>(
      'SELECT keyword, active, weight, last_crawled_at FROM ips WHERE id = $1 FOR UPDATE',
      [id],
    );
    const row = rows[0];
    return row && { keyword: row.keyword, active: row.active, weight: Number(row.weight), lastCrawledAt: row.last_crawled_at };
  }

  /** Inside a crawl result's transaction: the IP's new weight and interval, its last crawl (never moved back) and next crawl. */
  static async recordCrawl(client: pg.PoolClient, id: number, r: CrawlRecord): Promise<void> {
    await client.query(
      `UPDATE ips SET weight = $2, interval_seconds = $3,
              last_crawled_at = GREATEST(COALESCE(last_crawled_at, $4::timestamptz), $4::timestamptz),
              next_crawl_at = $5, updated_at = now()
        WHERE id = $1`,
      [id, r.weight, r.intervalSeconds, r.crawledAt, r.nextCrawlAt],
    );
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
