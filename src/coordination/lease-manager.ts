/**
 * Leases for singleton tasks, one per task name: the platform's Leadership (ctx.leadership,
 * leadership.ts). The design, the lease's scripts and how to write a singleton task are in
 * docs/coordination.md#one-lease-per-singleton-task; log lines, metric labels and GET /api/cluster
 * call a task `work`.
 *
 * Invariants: a term lasts until its local deadline (the last successful renewal's send time +
 * TTL − margin, lease-timing.ts), which Redis cannot beat; a refused renewal or a missed deadline
 * ends the term at once (signal aborted, `isCurrent()` false) and the task's stop functions are
 * awaited before the lease is released; renewal and release act only on this term's value. One
 * loop (one timer) per process drives every lease it competes for.
 *
 *   competing ──acquired──▶ held ──renewed──▶ held
 *       ▲                    │ renewal refused │ local deadline passed │ start failed │ shutdown
 *       │                    ▼
 *       └── stops awaited, lease released if still ours ── ending ──(shutdown)──▶ closed
 */
import { randomUUID } from 'node:crypto';
import { OutageLog } from '../lib/outage-log.js';
import type { Logger } from '../logging/logger.js';
import type { Metrics } from '../metrics/metrics.js';
import type { RedisClient } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import { LEADER_TASK, type LeaderTerm, type Leadership } from './leadership.js';
import { acquireLease, leaseValue, renewLease } from './lease-scripts.js';
import { localDeadline, nextAttemptDelayMs, renewEveryMs, retryDelayMs } from './lease-timing.js';
import { toError } from '../errors.js';
import { deleteIfEquals } from '../redis/delete-if-equals.js';

type StopFn = () => Promise<void>;
type StartFn = (term: LeaderTerm) => Promise<StopFn>;
type LeaseState = 'competing' | 'held' | 'ending' | 'closed';

export interface LeaseManagerDeps {
  /** A fail-fast connection of its own (a slow request path must not delay renewals). */
  redis: RedisClient;
  keys: Pick<Keys, 'lease' | 'leaseToken'>;
  instanceId: string;
  ttlMs: number;
  logger: Logger;
  metrics: Metrics;
}

class Term implements LeaderTerm {
  private readonly controller = new AbortController();
  readonly since = new Date();
  ended = false;
  /** Stop functions of the starts run in this term (undefined for a start that failed). */
  readonly stops: Promise<StopFn | undefined>[] = [];

  constructor(
    readonly task: string,
    readonly token: number,
    readonly value: string,
    public deadline: number,
  ) {}

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  isCurrent(): boolean {
    return !this.ended && performance.now() < this.deadline;
  }

  end(reason: string): void {
    this.ended = true;
    this.controller.abort(new Error(reason));
  }
}

interface TaskLease {
  name: string;
  key: string;
  tokenKey: string;
  starts: StartFn[];
  state: LeaseState;
  term: Term | undefined;
  /** Monotonic time of the next renewal (held) or acquisition attempt (competing). */
  nextOpAt: number;
  /** A Redis command of this lease is in flight. */
  busy: boolean;
  ending: Promise<void> | undefined;
}

const TASK_NAME = /^[A-Za-z0-9_.:-]{1,100}$/;

export class LeaseManager implements Leadership {
  private readonly tasks = new Map<string, TaskLease>();
  private readonly inflight = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private closing: Promise<void> | undefined;
  private readonly redisOutage: OutageLog<{ err: unknown; task: string }>;
  private readonly renewEvery: number;
  private readonly isLeaderGauge;
  private readonly changes;
  /** This process's owner id in its lease values: a value it wrote is one it may take back (lease-acquire.lua). */
  private readonly owner = randomUUID();

  constructor(private readonly deps: LeaseManagerDeps) {
    this.renewEvery = renewEveryMs(deps.ttlMs);
    this.isLeaderGauge = deps.metrics.gauge(
      'wp_cluster_is_leader',
      '1 while this instance holds the lease of the singleton task named by `work` (work="cluster": the platform leader).',
      ['work'],
    );
    this.changes = deps.metrics.counter(
      'wp_cluster_leader_changes_total',
      'Lease terms begun (acquired) and ended (lost, released) by this instance, by singleton task (work).',
      ['work', 'event'],
    );
    this.isLeaderGauge.set({ work: LEADER_TASK }, 0);
    this.redisOutage = new OutageLog({
      began: ({ err, task }) =>
        deps.logger.warn({ work: task, err: toError(err).message }, 'leases: Redis command failed; held leases last until their local deadline'),
      ended: () => deps.logger.info('leases: Redis reachable again'),
    });
  }

  whileLeader(name: string, start: StartFn): void {
    if (this.closing) return;
    if (!TASK_NAME.test(name)) throw new Error(`invalid singleton task name "${name}" (letters, digits, _ . : - only)`);
    let lease = this.tasks.get(name);
    if (!lease) {
      lease = {
        name,
        key: this.deps.keys.lease(name),
        tokenKey: this.deps.keys.leaseToken(name),
        starts: [],
        state: 'competing',
        term: undefined,
        nextOpAt: 0,
        busy: false,
        ending: undefined,
      };
      this.tasks.set(name, lease);
      this.isLeaderGauge.set({ work: name }, 0);
    }
    lease.starts.push(start);
    // Registered while the lease is held: it joins the current term.
    if (lease.state === 'held' && lease.term) lease.term.stops.push(this.runStart(lease, lease.term, start));
    this.schedule();
  }

  isLeader(task: string = LEADER_TASK): boolean {
    return this.tasks.get(task)?.term?.isCurrent() ?? false;
  }

  held(): { task: string; token: number; since: Date }[] {
    return [...this.tasks.values()].filter((w) => w.term?.isCurrent()).map((w) => ({ task: w.name, token: w.term!.token, since: w.term!.since }));
  }

  /** Names of the singleton tasks this process competes for. */
  registered(): string[] {
    return [...this.tasks.keys()];
  }

  /** Stops every held task (awaiting its stop functions), releases the leases and stops competing. Idempotent. */
  stop(): Promise<void> {
    return (this.closing ??= (async () => {
      clearTimeout(this.timer);
      await Promise.all([...this.tasks.values()].map((w) => (w.term ? this.end(w, 'released', 'shutdown') : (w.ending ?? Promise.resolve()))));
      // An acquisition that was in flight releases what it got (see acquire()).
      await Promise.all([...this.inflight]);
      for (const w of this.tasks.values()) w.state = 'closed';
    })());
  }

  // --- the loop ---------------------------------------------------------------------------

  private schedule(): void {
    if (this.closing) return;
    clearTimeout(this.timer);
    let next = Infinity;
    for (const w of this.tasks.values()) {
      if (w.state === 'held' && w.term) next = Math.min(next, w.term.deadline);
      if ((w.state === 'held' || w.state === 'competing') && !w.busy) next = Math.min(next, w.nextOpAt);
    }
    if (next === Infinity) return;
    this.timer = setTimeout(() => this.tick(), Math.max(0, Math.ceil(next - performance.now())));
    this.timer.unref();
  }

  private tick(): void {
    if (this.closing) return;
    const now = performance.now();
    for (const w of this.tasks.values()) {
      if (w.state === 'held' && w.term && now >= w.term.deadline) {
        void this.end(w, 'lost', 'local deadline passed without a successful renewal');
        continue;
      }
      if (w.busy || now < w.nextOpAt) continue;
      if (w.state === 'held') this.track(this.renew(w));
      else if (w.state === 'competing') this.track(this.acquire(w));
    }
    this.schedule();
  }

  private track(op: Promise<void>): void {
    this.inflight.add(op);
    void op.finally(() => this.inflight.delete(op));
  }

  private async acquire(w: TaskLease): Promise<void> {
    const { redis, instanceId, ttlMs } = this.deps;
    w.busy = true;
    const sentAt = performance.now();
    try {
      const [taken, n] = await acquireLease.run<[number, number]>(redis, { lease: w.key, tokenCounter: w.tokenKey }, { instanceId, ttlMs, owner: this.owner });
      this.redisReachable();
      if (taken !== 1) {
        w.nextOpAt = performance.now() + nextAttemptDelayMs(ttlMs, n);
        return;
      }
      const value = leaseValue(instanceId, n, this.owner);
      if (this.closing) {
        await deleteIfEquals(redis, w.key, value).catch(() => undefined);
        return;
      }
      this.begin(w, n, value, localDeadline(sentAt, ttlMs));
      w.nextOpAt = sentAt + this.renewEvery;
    } catch (err) {
      this.redisUnreachable(err, w.name);
      // As soon as a renewal would retry: a lease that expired during the outage is free the
      // moment Redis is back, and TTL/3 (20 s by default) left the task without a leader that long.
      w.nextOpAt = performance.now() + retryDelayMs(ttlMs);
    } finally {
      w.busy = false;
      this.schedule();
    }
  }

  private async renew(w: TaskLease): Promise<void> {
    const term = w.term!;
    const { redis, ttlMs } = this.deps;
    w.busy = true;
    const sentAt = performance.now();
    try {
      const renewed = await renewLease.run<number>(redis, { lease: w.key }, { termValue: term.value, ttlMs });
      this.redisReachable();
      if (term.ended) return;
      if (renewed === 1) {
        // From the send time: a reply that arrives late (after a pause) cannot stretch the term.
        term.deadline = localDeadline(sentAt, ttlMs);
        w.nextOpAt = sentAt + this.renewEvery;
      } else {
        void this.end(w, 'lost', 'renewal refused: the lease expired or another instance holds it');
      }
    } catch (err) {
      this.redisUnreachable(err, w.name);
      // Keep the term until its local deadline; retry soon.
      w.nextOpAt = performance.now() + retryDelayMs(ttlMs);
    } finally {
      w.busy = false;
      this.schedule();
    }
  }

  // --- terms ------------------------------------------------------------------------------

  private begin(w: TaskLease, token: number, value: string, deadline: number): void {
    const term = new Term(w.name, token, value, deadline);
    w.term = term;
    w.state = 'held';
    this.isLeaderGauge.set({ work: w.name }, 1);
    this.changes.inc({ work: w.name, event: 'acquired' });
    this.deps.logger.info({ work: w.name, term: token }, 'lease acquired: starting singleton work');
    for (const start of w.starts) term.stops.push(this.runStart(w, term, start));
  }

  private runStart(w: TaskLease, term: Term, start: StartFn): Promise<StopFn | undefined> {
    return Promise.resolve()
      .then(() => start(term))
      .catch((err: unknown) => {
        this.deps.logger.error({ err, work: w.name }, 'singleton work failed to start; giving its lease up');
        // Let another instance try; this one competes again after a full TTL.
        if (w.term === term) void this.end(w, 'released', 'start failed', this.deps.ttlMs);
        return undefined;
      });
  }

  /** Ends the current term at once; then awaits the task's stop functions and releases the lease. */
  private end(w: TaskLease, event: 'lost' | 'released', reason: string, backoffMs = 0): Promise<void> {
    const term = w.term;
    if (!term || term.ended) return w.ending ?? Promise.resolve();
    term.end(reason);
    w.state = 'ending';
    this.isLeaderGauge.set({ work: w.name }, 0);
    this.changes.inc({ work: w.name, event });
    const log = { work: w.name, term: term.token, reason };
    if (event === 'lost') this.deps.logger.warn(log, 'lease lost: stopping singleton work');
    else this.deps.logger.info(log, 'lease released: stopping singleton work');
    w.ending = (async () => {
      const stops = await Promise.all(term.stops);
      await Promise.all(stops.map((stop) => stop?.().catch((err: unknown) => this.deps.logger.error({ err, work: w.name }, 'singleton work failed to stop'))));
      // Still ours (deadline passed but Redis kept it, or shutdown): free it for the others now.
      await deleteIfEquals(this.deps.redis, w.key, term.value).catch(() => undefined);
      if (w.term === term) w.term = undefined;
      w.ending = undefined;
      if (w.state === 'ending') {
        w.state = this.closing ? 'closed' : 'competing';
        w.nextOpAt = performance.now() + backoffMs;
      }
      this.schedule();
    })();
    return w.ending;
  }

  private redisReachable(): void {
    this.redisOutage.success();
  }

  private redisUnreachable(err: unknown, task: string): void {
    this.redisOutage.failure({ err, task });
  }
}
