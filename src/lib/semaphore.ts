/** Counting semaphore, first come first served. */
export class Semaphore {
  private readonly waiting: (() => void)[] = [];
  private available: number;

  constructor(readonly capacity: number) {
    this.available = capacity;
  }

  get inUse(): number {
    return this.capacity - this.available;
  }

  acquire(): Promise<void> {
    if (this.available > 0) {
      this.available -= 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.available += 1;
  }
}
