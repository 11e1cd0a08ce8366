/** WORKER_SHARDS: the queue partitions (QUEUE_SHARDS) a process's workers consume. Pure. */

/**
 * The partitions a worker consumes: "all" (or empty) → every one; else a comma-separated list of
 * indexes and ranges ("0-3,5"). Throws naming what is wrong (index beyond the count, bad syntax).
 */
export function parseShardSpec(spec: string, count: number): number[] {
  const text = spec.trim();
  if (text === '' || text === 'all') return Array.from({ length: count }, (_, i) => i);
  const out = new Set<number>();
  for (const part of text.split(',')) {
    const m = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(part);
    if (!m) throw new Error(`"${part.trim()}" is not a partition or a range (e.g. 0-3,5)`);
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    if (to < from) throw new Error(`range "${part.trim()}" ends before it starts`);
    if (to >= count) throw new Error(`partition ${to} does not exist (QUEUE_SHARDS is ${count}: 0-${count - 1})`);
    for (let i = from; i <= to; i++) out.add(i);
  }
  return [...out].sort((a, b) => a - b);
}
