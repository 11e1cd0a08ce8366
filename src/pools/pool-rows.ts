/**
 * The database side of the pools: the rows of `titles` / `contents` and their status
 * (available → reserved → consumed, or available → consumed by the fallback). Set-based SQL on
 * the pg pool: one statement per batch, `FOR UPDATE SKIP LOCKED` so concurrent refills and
 * fallback claims never take the same row, and the (group_id, status, batch_id DESC, id) index
 * for every lookup.
 */
import type pg from 'pg';
import { distinctGroupIdsSql } from '../db/loose-index-scan.js';
import { inTransaction } from '../db/transaction.js';
import type { PoolRow, PoolType } from './pool-item.js';

/** Table per pool type: fixed identifiers, never user input. */
const TABLES: Record<PoolType, string> = { titles: 'titles', contents: 'contents' };

/** Rows per INSERT statement of an import. */
const INSERT_CHUNK = 5000;

interface RowRecord {
  id: string;
  batch_id: number;
  text: string;
}

const toRow = (r: RowRecord): PoolRow => ({ id: Number(r.id), batchId: r.batch_id, text: r.text });

export interface GroupState {
  groupId: number;
  /** Available rows (exact when counted, else 0 or 1 for "none" / "some"). */
  available: number;
  reserved: number;
}

export class PoolRows {
  constructor(private readonly pool: pg.Pool) {}

  /** The database clock, to the millisecond (the precision of reserved_at). */
  async now(): Promise<Date> {
    const { rows } = await this.pool.query<{ now: Date }>(`SELECT date_trunc('milliseconds', clock_timestamp()) AS now`);
    return rows[0]!.now;
  }

  /** Marks up to `limit` available rows reserved, first in serving order; returns them in that order. */
  async reserve(type: PoolType, groupId: number, limit: number): Promise<PoolRow[]> {
    return this.take(type, groupId, limit, 'reserved');
  }

  /** The DB fallback: marks up to `limit` available rows consumed in one statement; returns them in serving order. */
  async claim(type: PoolType, groupId: number, limit: number): Promise<PoolRow[]> {
    return this.take(type, groupId, limit, 'consumed');
  }

  private async take(type: PoolType, groupId: number, limit: number, to: 'reserved' | 'consumed'): Promise<PoolRow[]> {
    const t = TABLES[type];
    const stamp = to === 'reserved' ? 'reserved_at' : 'consumed_at';
    const { rows } = await this.pool.query<RowRecord>(
      `WITH picked AS (
         SELECT id FROM ${t}
         WHERE group_id = $1 AND status = 'available'
         ORDER BY batch_id DESC, id ASC
         LIMIT $2
         FOR UPDATE SKIP LOCKED
       ), taken AS (
         UPDATE ${t} r SET status = '${to}', ${stamp} = now()
         FROM picked WHERE r.id = picked.id
         RETURNING r.id, r.batch_id, r.text
       )
       SELECT id, batch_id, text FROM taken ORDER BY batch_id DESC, id ASC`,
      [groupId, limit],
    );
    return rows.map(toRow);
  }

  /**
   * Recovery (see refill-pool.ts): rows reserved before `reservedBefore` whose ids are not in
   * `keepIds` (the pool and the consumed list, read after `reservedBefore`) go back to available.
   */
  async releaseOrphans(type: PoolType, groupId: number, keepIds: string[], reservedBefore: Date): Promise<number> {
    const t = TABLES[type];
    const res = await this.pool.query(
      `UPDATE ${t} SET status = 'available', reserved_at = NULL
       WHERE group_id = $1 AND status = 'reserved' AND reserved_at < $2
         AND id NOT IN (SELECT unnest($3::bigint[]))`,
      [groupId, reservedBefore, keepIds],
    );
    return res.rowCount ?? 0;
  }

  /** Marks popped rows consumed; ids already consumed are left as they are. */
  async markConsumed(type: PoolType, ids: string[]): Promise<number> {
    if (!ids.length) return 0;
    const res = await this.pool.query(
      `UPDATE ${TABLES[type]} SET status = 'consumed', consumed_at = now()
       WHERE id = ANY($1::bigint[]) AND status <> 'consumed'`,
      [ids],
    );
    return res.rowCount ?? 0;
  }

  /** Inserts rows as available, all or nothing, in statements of INSERT_CHUNK rows. */
  async insert(type: PoolType, groupId: number, items: { text: string; batchId: number }[]): Promise<number> {
    return inTransaction(this.pool, async (client) => {
      let inserted = 0;
      for (let i = 0; i < items.length; i += INSERT_CHUNK) {
        const chunk = items.slice(i, i + INSERT_CHUNK);
        const res = await client.query(
          `INSERT INTO ${TABLES[type]} (group_id, batch_id, text)
           SELECT $1, u.batch_id, u.text FROM unnest($2::int[], $3::text[]) WITH ORDINALITY AS u(batch_id, text, n) ORDER BY u.n`,
          [groupId, chunk.map((c) => c.batchId), chunk.map((c) => c.text)],
        );
        inserted += res.rowCount ?? 0;
      }
      return inserted;
    });
  }

  /**
   * Every group of a table with its reserved count and its available rows: counted when
   * `countAvailable`, else 1 when there are any (cheap enough for a check every few seconds).
   */
  async groupStates(type: PoolType, options: { countAvailable: boolean }): Promise<GroupState[]> {
    return this.statesOf(type, `(${distinctGroupIdsSql(TABLES[type])}) g`, [], options.countAvailable);
  }

  /**
   * Group ids with a row available or reserved, ascending: what the leader publishes in the
   * shared config for the pools check (src/runtime/shared-config-content.ts). A loose index scan
   * for the group ids plus one probe of the same (group_id, status, …) index per group for a
   * live row: a few index probes per group whatever the table size.
   */
  async liveGroupIds(type: PoolType): Promise<number[]> {
    const t = TABLES[type];
    const { rows } = await this.pool.query<{ group_id: number }>(
      `SELECT g.group_id FROM (${distinctGroupIdsSql(t)}) g
       WHERE EXISTS (SELECT 1 FROM ${t} r WHERE r.group_id = g.group_id AND r.status IN ('available', 'reserved'))
       ORDER BY g.group_id`,
    );
    return rows.map((r) => Number(r.group_id));
  }

  /** The same for the given groups only (from the shared config: no scan for the group ids); available is 0 or 1. */
  async groupStatesOf(type: PoolType, groupIds: readonly number[]): Promise<GroupState[]> {
    if (!groupIds.length) return [];
    return this.statesOf(type, 'unnest($1::int[]) AS g(group_id)', [groupIds], false);
  }

  private async statesOf(type: PoolType, groupsSql: string, params: unknown[], countAvailable: boolean): Promise<GroupState[]> {
    const t = TABLES[type];
    const available = countAvailable
      ? `(SELECT count(*) FROM ${t} r WHERE r.group_id = g.group_id AND r.status = 'available')`
      : `(SELECT count(*) FROM (SELECT 1 FROM ${t} r WHERE r.group_id = g.group_id AND r.status = 'available' LIMIT 1) one)`;
    const { rows } = await this.pool.query<{ group_id: number; available: string; reserved: string }>(
      `SELECT g.group_id, ${available} AS available,
              (SELECT count(*) FROM ${t} r WHERE r.group_id = g.group_id AND r.status = 'reserved') AS reserved
       FROM ${groupsSql} ORDER BY g.group_id`,
      params,
    );
    return rows.map((r) => ({ groupId: r.group_id, available: Number(r.available), reserved: Number(r.reserved) }));
  }
}
