/**
 * When an IP's next crawl falls due. Pure.
 *
 * An IP that was crawled before is due at lastCrawledAt + interval. One never crawled, or whose
 * due time has passed (the platform was down), is due now; when many are due now at once
 * (start-up reconciliation), they are spread evenly over the spread window instead of all
 * landing on the same millisecond.
 */

export interface DueInput {
  ipId: number;
  lastCrawledAt: Date | null;
  intervalSeconds: number;
}

export function plannedDue(ip: Pick<DueInput, 'lastCrawledAt' | 'intervalSeconds'>, now: number): number {
  if (!ip.lastCrawledAt) return now;
  return Math.max(now, ip.lastCrawledAt.getTime() + ip.intervalSeconds * 1000);
}

/**
 * Due times for a batch of IPs: the planned time when it lies in the future, else a slot in
 * [now, now + spread). Slots follow the input order (oldest crawl first, never crawled first).
 */
export function spreadDueTimes(ips: readonly DueInput[], now: number, spreadMs: number): Map<number, number> {
  const out = new Map<number, number>();
  const dueNow = ips
    .filter((ip) => plannedDue(ip, now) <= now)
    .sort((a, b) => (a.lastCrawledAt?.getTime() ?? 0) - (b.lastCrawledAt?.getTime() ?? 0) || a.ipId - b.ipId);
  const step = dueNow.length > 1 ? spreadMs / dueNow.length : 0;
  dueNow.forEach((ip, i) => out.set(ip.ipId, now + Math.floor(i * step)));
  for (const ip of ips) if (!out.has(ip.ipId)) out.set(ip.ipId, plannedDue(ip, now));
  return out;
}
