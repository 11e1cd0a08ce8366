/**
 * Computes the shared config from the database: what every process needs and would otherwise
 * compute itself (the pool groups, read by the pools check). The leader does it every
 * CONFIG_REFRESH_INTERVAL_MS; any process does it when Redis cannot be reached.
 *
 * It no longer carries the active IPs with their weights: nothing read them, and they changed with
 * almost every crawl result (the weight), so at 100,000 IPs every process would have reloaded
 * several MB every round.
 *
 * Active pool groups: distinct group ids of `titles` / `contents` with rows available or reserved.
 * Found by a loose index scan (src/db/loose-index-scan.ts) plus one probe of the same
 * (group_id, status, …) index per group for a live row: a few index probes per group whatever
 * the table size.
 */
import type { SharedConfigContent } from '../context.js';
import type { PrismaClient } from '../db/client.js';
import { distinctGroupIdsSql } from '../db/loose-index-scan.js';

/** Group ids of `table` (a fixed identifier) with a row available or reserved, ascending. */
function liveGroupIds(prisma: PrismaClient, table: 'titles' | 'contents') {
  return prisma.$queryRawUnsafe<{ group_id: number }[]>(
    `SELECT g.group_id FROM (${distinctGroupIdsSql(table)}) g
     WHERE EXISTS (SELECT 1 FROM ${table} r WHERE r.group_id = g.group_id AND r.status IN ('available', 'reserved'))
     ORDER BY g.group_id`,
  );
}

export async function computeSharedConfig(prisma: PrismaClient): Promise<SharedConfigContent> {
  const [titles, contents] = await Promise.all([liveGroupIds(prisma, 'titles'), liveGroupIds(prisma, 'contents')]);
  return { poolGroups: { titles: titles.map((r) => Number(r.group_id)), contents: contents.map((r) => Number(r.group_id)) } };
}
