import type { Leadership } from '../context.js';
import type { Logger } from '../logging/logger.js';

/**
 * Leadership for a single instance: always leader. Used until the cluster role's lease-based
 * leadership takes over (src/cluster); correct only when one process runs the singleton work.
 */
export class LocalLeadership implements Leadership {
  private readonly started: Promise<(() => Promise<void>) | undefined>[] = [];
  private stopped = false;

  constructor(private readonly logger: Logger) {}

  isLeader(): boolean {
    return !this.stopped;
  }

  whileLeader(name: string, start: () => Promise<() => Promise<void>>): void {
    if (this.stopped) return;
    this.started.push(
      start().catch((err) => {
        this.logger.error({ err, work: name }, 'singleton work failed to start');
        return undefined;
      }),
    );
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const stops = await Promise.all(this.started.splice(0));
    await Promise.all(stops.map((s) => s?.().catch(() => undefined)));
  }
}
