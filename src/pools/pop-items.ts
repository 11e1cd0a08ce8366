/**
 * The pop path (runs in the API process): one script moves the popped items from the pool onto
 * the consumed list, the durable record of what was served (one LMOVE for a single item; RPOP with
 * a count and one LPUSH for several); when the pool is empty or Redis does not answer in time, claim rows from the DB in one statement
 * (`source: "db"`). A pool that drops below the threshold asks for a refill; pops ask for the
 * marking of their rows. See refill-pool.ts for why no row is served twice.
 *
 * A pop whose reply comes after its deadline (Redis slow, or this process's event loop stalled)
 * has been answered from the DB, so the items it took were served to nobody: they are put back at
 * the pool's consume end (one RPUSH, at most once: the connection never re-sends) and are the
 * next ones popped. Their entries in the consumed list stay where they are: removing entries from
 * the middle would break the marking job's trim (mark-consumed.ts), and "only if still there"
 * would lose the rows the marking job had already marked. So a put-back row may be `consumed` in
 * the DB while it waits in the pool; that mark only keeps the refill and the DB fallback away
 * from it, and its next pop records it again (marking is idempotent). Put-back rows are served
 * once, at most slightly out of order (after rows that other clients popped meanwhile).
 * Rows are lost only when the connection drops while a pop or a put-back is in flight (Redis may
 * have run it; nobody can tell): they are counted in wp_pool_rows_in_doubt_total and logged.
 *
 * With REDIS_REPLICA_ACKS a pop is served only once its replicas confirmed it (a pop a failover
 * loses puts its rows back in the pool: served twice). A pop they did not confirm in time is
 * handled like a late one: its items go back to the pool and the request is served from the DB,
 * or answered 503 when the DB has no row (not 404: the pool is not empty). So is a late pop
 * (its rows are on their way back).
 *
 * A refill in flight holds rows reserved on their way to the list: neither the list nor the
 * table's available rows show them. A pop that found too few in both while a refill holds the
 * pool's lock waits for those rows (at most REFILL_WAIT_MS) instead of answering that the rows
 * ran out: right after an import, a pop must not say "pool_empty" about rows being pooled.
 */
import { runGuarded } from '../revocation/guarded-script.js';
import type { Revocation } from '../revocation/revocation.js';
import { DependencyDownError, toError, UnauthenticatedError } from '../errors.js';
import type { Logger } from '../logging/logger.js';
import { commandMayHaveRun } from './command-may-have-run.js';
import { isDatabaseUnavailable } from '../db/database-unavailable.js';
import { DeadlineError } from '../lib/timeout.js';
import { ReplicaAckError, type ConnectionMark } from '../redis/replica-ack.js';
import type { PoolItem, PoolType, ServedItem } from './pool-item.js';
import { ConnectionChangedError, type PoolLists, type PopReply } from './pool-lists.js';
import type { PoolMetrics } from './pool-metrics.js';
import type { PoolRows } from './pool-rows.js';
import type { PoolTriggers } from './pool-triggers.js';

/** What became of a pop that replied after its deadline (wp_pool_late_pops_total). */
type LateOutcome = 'put_back' | 'nothing' | 'in_doubt';

export interface PopDeps {
  lists: PoolLists;
  rows: PoolRows;
  triggers: PoolTriggers;
  settings: { refillThreshold: number };
  metrics: PoolMetrics;
  logger: Logger;
}

/** Least time between two "Redis unreachable" (or "late reply") warnings of one process. */
const WARN_EVERY_MS = 10_000;
/** How long, and how often, a put-back that could not be sent is tried again. */
const PUT_BACK_PATIENCE_MS = 60_000;
const PUT_BACK_RETRY_MS = 200;
/** How long a pop that came up short waits for a refill in flight, and how often it looks. */
const REFILL_WAIT_MS = 1_000;
const REFILL_POLL_MS = 20;

export class PoolPopper {
  private readonly lastWarning = new Map<string, number>();

  constructor(private readonly deps: PopDeps) {}

  /**
   * Up to `count` rows, each served once; fewer (or none) when the pool and the table run out.
   * A `revocation` (the caller's credential check) runs in the pop script; when the script could
   * not confirm the credential, the full check runs and the pop once more; when the script could
   * not run, the check runs on its own before the DB is asked.
   */
  async pop(type: PoolType, groupId: number, count: number, revocation?: Revocation): Promise<ServedItem[]> {
    const { lists, rows, triggers, settings, metrics } = this.deps;
    const served: ServedItem[] = [];
    let belowThreshold = false;
    let redisAnswered = false;
    /** Why the pool's rows may be held back from this request (its pop late or unconfirmed): then an empty DB is no "pool_empty". */
    let heldBack: ReplicaAckError | DeadlineError | undefined;
    try {
      const { items, remaining, shortfall, sentOn } = await runGuarded(revocation, () =>
        lists.pop(type, groupId, count, (late) => this.whenLate(type, groupId, count, late), revocation),
      );
      if (shortfall) {
        // The replicas did not confirm the pop: a failover now would put its items back in the
        // pool, and serving them would serve them twice. They go back now and are served later.
        if (items.length) void this.putBackUnconfirmed(type, groupId, items, shortfall, sentOn);
        throw shortfall;
      }
      for (const item of items) served.push({ id: item.id, text: item.text, source: 'pool' });
      if (items.length) triggers.requestMarkConsumed(type, groupId);
      belowThreshold = remaining < settings.refillThreshold;
      redisAnswered = true;
    } catch (err) {
      // The credential check itself refused (401) or could not be made (503).
      if (err instanceof UnauthenticatedError || err instanceof DependencyDownError) throw err;
      if (err instanceof ReplicaAckError || err instanceof DeadlineError) heldBack = err;
      // Past the deadline whenLate follows the pop (its rows go back to the pool); any other failure is final now.
      else if (commandMayHaveRun(err)) this.inDoubt(type, groupId, count, err);
      this.warn('redis', { err: toError(err).message }, 'pool pop failed in Redis; serving from the DB');
      await revocation?.check();
    }
    const fromPool = served.length;
    if (fromPool < count) {
      try {
        const claimed = await rows.claim(type, groupId, count - fromPool);
        for (const row of claimed) served.push({ id: row.id, text: row.text, source: 'db' });
        // The table ran out too: a refill would find nothing (orphans are the periodic check's job).
        if (claimed.length < count - fromPool) belowThreshold = false;
      } catch (err) {
        // Items already popped are recorded as consumed: hand them out rather than lose them.
        if (!fromPool) {
          if (isDatabaseUnavailable(err))
            throw new DependencyDownError('database', 'the pool is empty or unreachable and the database is unavailable', { cause: err });
          throw err;
        }
        this.deps.logger.warn({ err: toError(err).message, type, groupId }, 'DB fallback failed; serving the pooled items only');
      }
    }
    // The pool's rows are held back (for want of replicas, or the pop is late and its rows are
    // on their way back): "pool_empty" would be untrue.
    if (heldBack && !served.length) {
      const why =
        heldBack instanceof ReplicaAckError
          ? 'the pool pop was not confirmed by the Redis replicas (REDIS_REPLICA_ACKS)'
          : 'the pool pop got no reply from Redis in time (REDIS_COMMAND_TIMEOUT_MS); its rows go back to the pool';
      throw new DependencyDownError('redis', `${why} and the DB had no row`, { cause: heldBack });
    }
    // Only when Redis answered the first pop (redisAnswered): otherwise the DB was the answer.
    if (served.length < count && redisAnswered) await this.awaitRefill(type, groupId, count, served, revocation);
    if (belowThreshold) triggers.requestRefill(type, groupId);
    const pooled = served.filter((s) => s.source === 'pool').length;
    if (pooled) metrics.served.inc({ type, source: 'pool' }, pooled);
    if (served.length > pooled) metrics.served.inc({ type, source: 'db' }, served.length - pooled);
    return served;
  }

  /** Pops what a refill in flight pushes, into `served`, until `count` are served, the refill ends or REFILL_WAIT_MS passed. */
  private async awaitRefill(type: PoolType, groupId: number, count: number, served: ServedItem[], revocation?: Revocation): Promise<void> {
    const { lists, triggers } = this.deps;
    const giveUpAt = Date.now() + REFILL_WAIT_MS;
    try {
      while (served.length < count && Date.now() < giveUpAt && (await lists.refilling(type, groupId))) {
        await new Promise((resolve) => setTimeout(resolve, REFILL_POLL_MS));
        const wanted = count - served.length;
        const { items, shortfall, sentOn } = await runGuarded(revocation, () =>
          lists.pop(type, groupId, wanted, (late) => this.whenLate(type, groupId, wanted, late), revocation),
        );
        if (shortfall) {
          if (items.length) void this.putBackUnconfirmed(type, groupId, items, shortfall, sentOn);
          return;
        }
        for (const item of items) served.push({ id: item.id, text: item.text, source: 'pool' });
        if (items.length) triggers.requestMarkConsumed(type, groupId);
      }
    } catch (err) {
      if (err instanceof UnauthenticatedError || err instanceof DependencyDownError) throw err;
      // Redis went away meanwhile: answer with what was served (a pop that may have run is in doubt, as above).
      if (!(err instanceof DeadlineError) && commandMayHaveRun(err)) this.inDoubt(type, groupId, count - served.length, err);
    }
  }

  /** The outcome of a pop that missed its deadline: its items, if any, go back to the pool; counted in wp_pool_late_pops_total once known. */
  private whenLate(type: PoolType, groupId: number, count: number, late: Promise<PopReply>): void {
    void late
      .then(
        // A late pop its replicas did not confirm goes back on its own connection only (see putBack).
        ({ items, shortfall, sentOn }): Promise<LateOutcome> | LateOutcome => {
          if (!items.length) return 'nothing';
          return shortfall ? this.putBackUnconfirmed(type, groupId, items, shortfall, sentOn) : this.putBack(type, groupId, items, undefined, 'late');
        },
        // An error reply (the AOF guard refusing it once its deadline had passed, say): nothing was taken.
        (err: unknown): LateOutcome => {
          if (!commandMayHaveRun(err)) return 'nothing';
          this.inDoubt(type, groupId, count, err);
          return 'in_doubt';
        },
      )
      .then((outcome) => this.deps.metrics.latePops.inc({ type, outcome }));
  }

  /** The items of a pop its replicas did not confirm go back on the pop's own connection, or are in doubt when it is not known. */
  private putBackUnconfirmed(
    type: PoolType,
    groupId: number,
    items: PoolItem[],
    shortfall: ReplicaAckError,
    sentOn: ConnectionMark | undefined,
  ): Promise<LateOutcome> {
    if (sentOn) return this.putBack(type, groupId, items, sentOn);
    this.inDoubt(type, groupId, items.length, shortfall, items);
    return Promise.resolve('in_doubt');
  }

  /**
   * Puts the items of a late or unconfirmed pop back; a put-back that could not be sent (the
   * connection just dropped) is sent again once it is up, unless it is bound to the connection
   * the pop went to (`sentOn`, an unconfirmed pop): then its rows are in doubt.
   */
  private async putBack(
    type: PoolType,
    groupId: number,
    items: PoolItem[],
    sentOn?: ConnectionMark,
    why: 'late' | 'unconfirmed' = 'unconfirmed',
  ): Promise<LateOutcome> {
    const { lists, metrics } = this.deps;
    const giveUpAt = Date.now() + PUT_BACK_PATIENCE_MS;
    for (;;) {
      try {
        await lists.putBack(type, groupId, items, sentOn);
        metrics.putBack.inc({ type }, items.length);
        this.warn(
          why,
          { type, groupId, rows: items.length },
          why === 'late'
            ? 'pool pop replied after its deadline; its rows were put back in the pool'
            : 'pool pop not confirmed by the Redis replicas (REDIS_REPLICA_ACKS); its rows were put back in the pool',
        );
        return 'put_back';
      } catch (err) {
        // Bound to a connection that is gone: the pop may or may not be on the server now answering.
        if (err instanceof ConnectionChangedError || commandMayHaveRun(err)) {
          this.inDoubt(type, groupId, items.length, err, items);
          return 'in_doubt';
        }
        if (lists.closed || Date.now() >= giveUpAt) {
          this.lost(type, groupId, items, err);
          return 'in_doubt';
        }
      }
      await new Promise((resolve) => setTimeout(resolve, PUT_BACK_RETRY_MS).unref());
    }
  }

  /** Rows that may be recorded consumed without having been served (the ids when known). */
  private inDoubt(type: PoolType, groupId: number, rows: number, err: unknown, items?: PoolItem[]): void {
    this.deps.metrics.inDoubt.inc({ type }, rows);
    this.deps.logger.error(
      { err: toError(err).message, type, groupId, rows, ...(items ? { ids: items.map((i) => i.id) } : {}) },
      'the Redis connection dropped while a pool pop (or its put-back) was in flight: its rows may be recorded consumed without having been served',
    );
  }

  /** A put-back that could not be sent before the connection closed or the patience ran out: the rows are recorded consumed and served to nobody. */
  private lost(type: PoolType, groupId: number, items: PoolItem[], err: unknown): void {
    this.deps.metrics.inDoubt.inc({ type }, items.length);
    this.deps.logger.error(
      { err: toError(err).message, type, groupId, ids: items.map((i) => i.id) },
      'rows of a late pool pop could not be put back: they are recorded consumed but were not served',
    );
  }

  private warn(kind: string, fields: Record<string, unknown>, message: string): void {
    const now = Date.now();
    if (now - (this.lastWarning.get(kind) ?? 0) < WARN_EVERY_MS) return;
    this.lastWarning.set(kind, now);
    this.deps.logger.warn(fields, message);
  }
}
