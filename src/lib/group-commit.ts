/**
 * Group commit: callers submit items and wait until a flush that carried all of them is done.
 *
 * Items that arrive while `parallel` flushes are running wait and leave together in the next
 * one (at most `maxItems` items and `maxBytes` by `sizeOf` per flush). At rest every item leaves
 * at once, so nothing waits on a timer; under load each flush carries what piled up meanwhile.
 * The API uses it to put many accepted messages into one persist job, the persist worker to
 * write the messages of many jobs with one INSERT.
 *
 * A failed flush fails every submission that had an item in it; the callers retry.
 */
export interface GroupCommitOptions<T> {
  maxItems: number;
  maxBytes?: number;
  sizeOf?: (item: T) => number;
  parallel: number;
  flush: (items: T[]) => Promise<void>;
}

interface Ticket {
  remaining: number;
  error: unknown;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export class GroupCommit<T> {
  private pending: { item: T; ticket: Ticket }[] = [];
  private running = 0;

  constructor(private readonly options: GroupCommitOptions<T>) {}

  /** Resolves once every item has been flushed; rejects when a flush carrying one of them failed. */
  submit(items: T[]): Promise<void> {
    if (items.length === 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const ticket: Ticket = { remaining: items.length, error: undefined, resolve, reject };
      for (const item of items) this.pending.push({ item, ticket });
      this.pump();
    });
  }

  /** Items waiting for a flush (not counting the ones in flight). */
  get waiting(): number {
    return this.pending.length;
  }

  private pump(): void {
    while (this.running < this.options.parallel && this.pending.length > 0) {
      const batch = this.take();
      this.running++;
      void this.run(batch);
    }
  }

  private take(): { item: T; ticket: Ticket }[] {
    const { maxItems, maxBytes, sizeOf } = this.options;
    let count = 0;
    let bytes = 0;
    while (count < this.pending.length && count < maxItems) {
      const size = maxBytes !== undefined && sizeOf ? sizeOf(this.pending[count]!.item) : 0;
      if (count > 0 && maxBytes !== undefined && bytes + size > maxBytes) break;
      bytes += size;
      count++;
    }
    return this.pending.splice(0, count);
  }

  private async run(batch: { item: T; ticket: Ticket }[]): Promise<void> {
    let error: unknown;
    let failed = false;
    try {
      await this.options.flush(batch.map((b) => b.item));
    } catch (err) {
      failed = true;
      error = err;
    }
    this.running--;
    for (const { ticket } of batch) {
      if (failed && ticket.error === undefined) ticket.error = error ?? new Error('flush failed');
      if (--ticket.remaining === 0) {
        if (ticket.error !== undefined) ticket.reject(ticket.error);
        else ticket.resolve();
      }
    }
    this.pump();
  }
}
