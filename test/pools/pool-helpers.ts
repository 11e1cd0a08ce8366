/** Shared helpers of the pool tests: import rows, pop until empty, read the serving order. */
import { expect } from 'vitest';
import type { ApiClient } from '../support/http-client.js';

export interface Served {
  id: number;
  text: string;
  source: 'pool' | 'db';
}

/** Imports `count` rows of one batch; texts are `<prefix>-<batch>-<n>`. */
export async function importBatch(api: ApiClient, type: string, groupId: number, batchId: number, count: number, prefix = 't'): Promise<void> {
  const items = Array.from({ length: count }, (_, n) => ({ text: `${prefix}-${batchId}-${n}`, batchId }));
  const res = await api.post(`/api/pools/${type}/${groupId}/items`, { items });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect(res.body).toEqual({ inserted: count });
}

/**
 * Imports several batches in ONE request, their items interleaved, so that no refill can run
 * between batches (a refill pushes what is available at that moment; a batch imported later is
 * served after the rows already pooled, whatever its batch id).
 */
export async function importBatches(api: ApiClient, type: string, groupId: number, batches: { batchId: number; count: number }[], prefix = 't'): Promise<void> {
  const items: { text: string; batchId: number }[] = [];
  const longest = Math.max(...batches.map((b) => b.count));
  for (let n = 0; n < longest; n++) for (const b of batches) if (n < b.count) items.push({ text: `${prefix}-${b.batchId}-${n}`, batchId: b.batchId });
  const res = await api.post(`/api/pools/${type}/${groupId}/items`, { items });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect(res.body).toEqual({ inserted: items.length });
}

/** One pop; undefined on 404 pool_empty. */
export async function popOne(api: ApiClient, type: string, groupId: number): Promise<Served | undefined> {
  const res = await api.post(`/api/pools/${type}/${groupId}/pop`);
  if (res.status === 404) {
    expect(res.body.error.code).toBe('pool_empty');
    return undefined;
  }
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as Served;
}

export async function popMany(api: ApiClient, type: string, groupId: number, count: number): Promise<Served[]> {
  const res = await api.post(`/api/pools/${type}/${groupId}/pop-many`, { count });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.items.length).toBeLessThanOrEqual(count);
  return res.body.items as Served[];
}

/**
 * pop-many until the pool and the table are both empty. An empty answer alone does not end it: a
 * refill may be between its reserve and its push, or reserved rows may wait for their recovery.
 */
export async function popUntilDrained(api: ApiClient, type: string, groupId: number, count: number): Promise<Served[]> {
  const served: Served[] = [];
  for (;;) {
    const got = await popMany(api, type, groupId, count);
    served.push(...got);
    if (got.length) continue;
    if (await drained(api, type, groupId)) return served;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Nothing pooled, nothing available, and no reserved row waiting for a push or a recovery. */
export async function drained(api: ApiClient, type: string, groupId: number): Promise<boolean> {
  const o = await poolOverview(api, type, groupId);
  return o.poolLength === 0 && o.available === 0 && o.reserved <= o.pendingConsumed;
}

/** The batch of a row from its text (`<prefix>-<batch>-<n>`). */
export const batchOf = (s: Served) => Number(s.text.split('-').at(-2));

/** True when the stream is in serving order: batch_id DESC, then id ASC. */
export function inServingOrder(stream: Served[]): boolean {
  for (let i = 1; i < stream.length; i++) {
    const a = stream[i - 1]!;
    const b = stream[i]!;
    const ok = batchOf(a) > batchOf(b) || (batchOf(a) === batchOf(b) && a.id < b.id);
    if (!ok) return false;
  }
  return true;
}

export function duplicates(ids: number[]): number[] {
  const seen = new Set<number>();
  const dup = new Set<number>();
  for (const id of ids) (seen.has(id) ? dup : seen).add(id);
  return [...dup];
}

export async function poolOverview(api: ApiClient, type: string, groupId: number) {
  const res = await api.get('/api/pools');
  expect(res.status).toBe(200);
  return (res.body.pools as any[]).find((p) => p.type === type && p.groupId === groupId);
}

/**
 * How many rows of a stream must be left out for the rest to be in serving order: its length
 * minus its longest subsequence in serving order (0 when the stream is in order).
 */
export function outOfOrder(stream: Served[]): number {
  // Patience sorting on the key (batch DESC, id ASC): tails[k] = smallest tail of an ordered run of length k+1.
  const before = (a: Served, b: Served) => batchOf(a) > batchOf(b) || (batchOf(a) === batchOf(b) && a.id < b.id);
  const tails: Served[] = [];
  for (const s of stream) {
    let lo = 0;
    let hi = tails.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (before(tails[mid]!, s)) lo = mid + 1;
      else hi = mid;
    }
    tails[lo] = s;
  }
  return stream.length - tails.length;
}

/** The value of a counter on the platform's /metrics, summed over the series whose labels include `labels` (0 when absent). */
export async function metricValue(api: ApiClient, name: string, labels: Record<string, string> = {}): Promise<number> {
  const res = await api.get('/metrics');
  expect(res.status).toBe(200);
  let sum = 0;
  for (const line of String(res.body).split('\n')) {
    const m = /^(\w+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const series = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    if (Object.entries(labels).every(([k, v]) => series[k] === v)) sum += Number(m[3]);
  }
  return sum;
}
