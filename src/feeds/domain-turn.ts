/**
 * One refresh job's turn at a domain (domain-gate.ts): the only code that takes, waits for,
 * gives back and hands over a turn, so that the refresh (refresh-feed.ts) reads as its steps.
 *
 * States, for one job:
 *
 *   none ──take: now──→ held ──request ends (end)────────────→ none (next job in line handed the turn)
 *     │                   ├──not used (giveBack)───────────────→ none (next job in line handed the turn)
 *     │                   └──redirect to another host (moveTo)─→ none, waiting in the slot ─→ held (the new host)
 *     └──take: not yet──→ none (the job keeps its place in line; the caller delays it)
 *
 * Invariants:
 * - at most one domain is held, and every way out of `held` hands the domain's next turn to the
 *   first job in line (FeedScheduler.handOver), so the line never waits for a lease to run out;
 * - a job told to wait keeps its domain in its data and runs at priority 0, so that its next
 *   wake takes the turn before touching the database and runs ahead of fresh work;
 * - a wait in the worker slot (a redirect's host) cut short (time limit, Redis) gives the place back.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Job } from 'bullmq';
import type { FeedRefreshPayload } from '../queues/payloads/feeds.js';
import type { DomainGate } from './domain-gate.js';
import type { FeedScheduler } from './feed-scheduler.js';

/**
 * Longest sleep between two looks at another host's turn during a redirect: a hand-over may move
 * the job's place earlier, and a job active in a worker slot is not woken by it.
 */
const HOP_TURN_POLL_MS = 250;

export class DomainTurn {
  /** The domain whose turn this job holds, if any. */
  private held: string | undefined;

  constructor(
    private readonly job: Job<FeedRefreshPayload>,
    private readonly gate: DomainGate,
    private readonly scheduler: Pick<FeedScheduler, 'handOver'>,
  ) {}

  /** The domain whose turn this job holds (undefined: none, or while it waits for a redirect host's turn). */
  get domain(): string | undefined {
    return this.held;
  }

  private get jobId(): string {
    return this.job.id!;
  }

  /**
   * Takes `domain`'s turn: 0 when this job holds it now; else the ms left until it comes, once
   * the job keeps its place (its domain in its data, priority 0: BullMQ's plain wait list).
   */
  async take(domain: string): Promise<number> {
    const wait = await this.gate.acquire(domain, this.jobId);
    if (wait === 0) {
      this.held = domain;
      return 0;
    }
    const answered = performance.now();
    if (this.job.data.domain !== domain) await this.job.updateData({ ...this.job.data, domain });
    if (this.job.priority !== 0) await this.job.changePriority({ priority: 0 });
    return Math.max(1, Math.round(wait - (performance.now() - answered)));
  }

  /** Gives back a turn not used (the feed is gone or locked) without recording a request. */
  async giveBack(): Promise<void> {
    if (!this.held) return;
    await this.scheduler.handOver(this.held, await this.gate.cancel(this.held, this.jobId));
    this.held = undefined;
  }

  /** The request has ended: recorded (a Retry-After pushes the domain's next request back). */
  async end(retryAfterMs = 0): Promise<void> {
    if (!this.held) return;
    await this.scheduler.handOver(this.held, await this.gate.release(this.held, this.jobId, retryAfterMs));
    this.held = undefined;
  }

  /**
   * A redirect to `host` (a host name, as domainOf gives it): the request on the held host has
   * ended, and this job waits in its worker slot for `host`'s turn (bounded by `signal`).
   */
  async moveTo(host: string, signal: AbortSignal): Promise<void> {
    if (host === this.held) return;
    await this.end();
    await this.waitFor(host, signal);
    this.held = host;
  }

  private async waitFor(domain: string, signal: AbortSignal): Promise<void> {
    try {
      for (;;) {
        const wait = await this.gate.acquire(domain, this.jobId);
        if (wait === 0) return;
        await sleep(Math.min(wait, HOP_TURN_POLL_MS), undefined, { signal });
      }
    } catch (err) {
      await this.scheduler.handOver(domain, await this.gate.cancel(domain, this.jobId)).catch(() => undefined);
      throw err;
    }
  }
}
