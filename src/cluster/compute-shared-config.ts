/**
 * Computes the shared config from the database: what every process needs and would otherwise
 * compute itself. The leader does it every CONFIG_REFRESH_INTERVAL_MS; any process does it when
 * Redis cannot be reached.
 *
 * Active pool groups: distinct group ids of `titles` / `contents` with rows available or reserved.
 * A plain DISTINCT reads every row; the recursive query skips from one group id to the next
 * through the (group_id, status, …) index and asks the same index whether the group has a live
 * row, so it costs a few index probes per group whatever the table size.
 */
import type { SharedConfigContent } from '../context.js';
import type { PrismaClient } from '../db/client.js';

export async function computeSharedConfig(prisma: PrismaClient): Promise<SharedConfigContent> {
  const [titles, contents, ips] = await Promise.all([
    prisma.$queryRaw<{ group_id: number }[]>`
      WITH RECURSIVE g(group_id) AS (
        (SELECT group_id FROM titles ORDER BY group_id LIMIT 1)
        UNION ALL
        SELECT (SELECT t.group_id FROM titles t WHERE t.group_id > g.group_id ORDER BY t.group_id LIMIT 1)
        FROM g WHERE g.group_id IS NOT NULL
      )
      SELECT g.group_id FROM g
      WHERE g.group_id IS NOT NULL
        AND EXISTS (SELECT 1 FROM titles t WHERE t.group_id = g.group_id AND t.status IN ('available', 'reserved'))`,
    prisma.$queryRaw<{ group_id: number }[]>`
      WITH RECURSIVE g(group_id) AS (
        (SELECT group_id FROM contents ORDER BY group_id LIMIT 1)
        UNION ALL
        SELECT (SELECT c.group_id FROM contents c WHERE c.group_id > g.group_id ORDER BY c.group_id LIMIT 1)
        FROM g WHERE g.group_id IS NOT NULL
      )
      SELECT g.group_id FROM g
      WHERE g.group_id IS NOT NULL
        AND EXISTS (SELECT 1 FROM contents c WHERE c.group_id = g.group_id AND c.status IN ('available', 'reserved'))`,
    prisma.ip.findMany({ where: { active: true }, select: { id: true, keyword: true, weight: true, intervalSeconds: true }, orderBy: { id: 'asc' } }),
  ]);
  return {
    poolGroups: { titles: titles.map((r) => Number(r.group_id)), contents: contents.map((r) => Number(r.group_id)) },
    ips,
  };
}
