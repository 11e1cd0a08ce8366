/**
 * Computes the shared config from the database: what every process needs and would otherwise
 * compute itself. The leader does it every CONFIG_REFRESH_INTERVAL_MS; any process does it when
 * Redis cannot be reached.
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
  const [titles, contents, ips] = await Promise.all([
    liveGroupIds(prisma, 'titles'),
    liveGroupIds(prisma, 'contents'),
    prisma.ip.findMany({ where: { active: true }, select: { id: true, keyword: true, weight: true, intervalSeconds: true }, orderBy: { id: 'asc' } }),
  ]);
  return {
    poolGroups: { titles: titles.map((r) => Number(r.group_id)), contents: contents.map((r) => Number(r.group_id)) },
    ips,
  };
}
