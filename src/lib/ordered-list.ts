/**
 * Things in order of arrival, for the request path (the requests in flight, the idle
 * connections), oldest first: `add` at the new end, `remove` anywhere, both O(1), and iteration in
 * order that may remove as it goes. Pure: no I/O.
 *
 * Not a Set or a Map, on purpose. A collection that every request enters and leaves is the
 * request path's busiest long-lived object, and V8 collects a churned Set or Map badly: it
 * rebuilds the table as entries come and go, and a discarded table keeps a link to its successor
 * (for iterators still walking it) and the entries it held. Once one table has reached the old
 * space (a full collection promotes whatever is live then), the tables after it and the requests
 * in them stay reachable for every scavenge, which copies and promotes each request's whole graph
 * (its node:http objects, headers, handler state) until the next full collection: on the API
 * server, scavenges of 5–13 ms instead of under 1 and ~2.6 KB promoted a pool pop
 * (docs/benchmarks.md, "Where the gap goes"). An entry leaves this list with its links and its
 * value cleared, so nothing that has left holds anything.
 */

export interface OrderedEntry<T> {
  /** Undefined once removed. */
  value: T | undefined;
  older: OrderedEntry<T> | undefined;
  newer: OrderedEntry<T> | undefined;
}

export class OrderedList<T> {
  private oldest: OrderedEntry<T> | undefined;
  private newest: OrderedEntry<T> | undefined;
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** The oldest value, if any. */
  first(): T | undefined {
    return this.oldest?.value;
  }

  /** Adds `value` (never undefined: that marks an entry that left) as the newest; the entry is what `remove` takes. */
  add(value: T): OrderedEntry<T> {
    const entry: OrderedEntry<T> = { value, older: this.newest, newer: undefined };
    if (this.newest) this.newest.newer = entry;
    else this.oldest = entry;
    this.newest = entry;
    this.count++;
    return entry;
  }

  /** Takes the entry out (no-op when it already left). */
  remove(entry: OrderedEntry<T>): void {
    if (entry.value === undefined) return;
    if (entry.older) entry.older.newer = entry.newer;
    else this.oldest = entry.newer;
    if (entry.newer) entry.newer.older = entry.older;
    else this.newest = entry.older;
    entry.value = entry.older = entry.newer = undefined;
    this.count--;
  }

  /**
   * The values, oldest first. Removing the value just given (a sweep that answers it) is safe; an
   * iteration that comes to an entry removed meanwhile ends there (the next sweep sees the rest).
   */
  *values(): IterableIterator<T> {
    for (let entry = this.oldest; entry; ) {
      const next = entry.newer;
      if (entry.value !== undefined) yield entry.value;
      entry = next;
    }
  }
}
