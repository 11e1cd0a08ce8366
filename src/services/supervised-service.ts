/**
 * Keeps one embedded service (redis-server or PostgreSQL) running for the process that owns
 * DATA_DIR: a child that exits when nobody asked it to is started again on the same data, port
 * and password, so every connection to it, this process's and the attached processes', comes
 * back by itself.
 *
 * States:
 *   up ──the child exits unasked──▶ restarting ──a start answers──▶ up
 *   restarting ──the attempts of the episode are spent (restart-budget.ts), or the process
 *                 stops and the stopping window passes──▶ lost (final)
 *   any ──stop()──▶ stopped (final)
 *
 * Each death, failed attempt and restart is logged; `lost` resolves once the service is given
 * up, and the process must then stop (run.ts): a process running without its database or Redis
 * would look alive to a liveness probe while doing nothing.
 *
 * During the process's stop (`hurry()`) there is no more backoff: a service that is down is tried
 * at once and then at short intervals (the policy's stopping window, 10 s), so the roles can still
 * hand back their jobs; past the window it is lost, and the stop does not wait for work that needs
 * it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { toError } from '../errors.js';
import type { Logger } from '../logging/logger.js';
import type { ExitInfo } from './child-process.js';
import { RestartBudget, type RestartPolicy } from './restart-budget.js';

export type EmbeddedServiceName = 'redis' | 'postgres';

/** A running service child, as its start functions return it. */
export interface ServiceChild {
  pid: number;
  exited: Promise<ExitInfo>;
  /** Stops it (clean shutdown). Idempotent. */
  stop(): Promise<void>;
  /** Signals it to stop without waiting. */
  signalStop(): void;
}

/** A service that could not be brought back. */
export interface LostService {
  service: EmbeddedServiceName;
  /** The server's own log: why it did not start. */
  logFile: string;
  attempts: number;
  error: Error;
  /** The last attempt's error on one line (with the end of the server's log when it quoted it). */
  reason: string;
}

export interface ServiceStatus {
  service: EmbeddedServiceName;
  up: boolean;
  /** Given up: it will not come back. */
  lost: boolean;
  /** Restarts that brought the service back since this process started it. */
  restarts: number;
}

export interface SupervisedServiceOptions {
  service: EmbeddedServiceName;
  /** How the log names it: "redis-server", "PostgreSQL". */
  label: string;
  logFile: string;
  /** Starts the service again on the same data, port and password. */
  start: () => Promise<ServiceChild>;
  policy: RestartPolicy;
  logger?: Logger;
}

type State = 'up' | 'restarting' | 'lost' | 'stopped';

/** A start error on one line: its first line and, when it quotes the server's log, that log's last lines (the reason). */
function summary(err: Error): string {
  const lines = err.message.split('\n').filter((l) => l.trim());
  return lines.length > 1 ? [lines[0], ...lines.slice(1).slice(-2)].join(' | ') : (lines[0] ?? '');
}

export class SupervisedService {
  private state: State = 'up';
  private child: ServiceChild | undefined;
  private restarts = 0;
  private readonly budget: RestartBudget;
  /** The restart loop while one runs (stop() waits for its start in flight). */
  private restarting: Promise<void> | undefined;
  /** Ends the current backoff wait early (hurry, stop). */
  private wake: AbortController | undefined;
  /** When the process began to stop (hurry()). */
  private hurriedAt: number | undefined;
  /** Attempts of the current episode, for the log. */
  private attempts = 0;
  private resolveLost!: (lost: LostService) => void;
  /** Resolves when the service is given up; never otherwise. */
  readonly lost = new Promise<LostService>((resolve) => (this.resolveLost = resolve));
  private stopping: Promise<void> | undefined;

  constructor(
    private readonly options: SupervisedServiceOptions,
    first: ServiceChild,
  ) {
    this.budget = new RestartBudget(options.policy, Date.now());
    this.adopt(first);
  }

  status(): ServiceStatus {
    return { service: this.options.service, up: this.state === 'up', lost: this.state === 'lost', restarts: this.restarts };
  }

  /** The process is stopping: no more backoff (see the header). */
  hurry(): void {
    this.hurriedAt ??= Date.now();
    this.wake?.abort();
  }

  /** Stops the service for good (and any restart under way). Idempotent. */
  stop(): Promise<void> {
    return (this.stopping ??= (async () => {
      if (this.state !== 'lost') this.state = 'stopped';
      this.wake?.abort();
      await this.restarting;
      await this.child?.stop();
    })());
  }

  /** Signals the service to stop without waiting (process exit handlers). */
  signalStop(): void {
    if (this.state !== 'lost') this.state = 'stopped';
    this.wake?.abort();
    this.child?.signalStop();
  }

  private adopt(child: ServiceChild): void {
    this.child = child;
    void child.exited.then((exit) => {
      if (this.child !== child || this.state !== 'up') return; // stopped on purpose
      this.child = undefined;
      this.state = 'restarting';
      this.options.logger?.error(
        { service: this.options.service, pid: child.pid, code: exit.code, signal: exit.signal, log: this.options.logFile },
        `embedded ${this.options.label} exited unexpectedly; restarting it on the same port and data`,
      );
      this.restarting = this.restart(Date.now()).finally(() => (this.restarting = undefined));
    });
  }

  private async restart(diedAt: number): Promise<void> {
    const { service, label, logFile, logger, policy } = this.options;
    this.budget.died(diedAt);
    if (this.budget.spent === 0) this.attempts = 0; // a new episode
    let lastError: Error = new Error(`${label} exited`);
    for (;;) {
      if (this.stopped()) return;
      const delay = this.nextDelay(policy, diedAt);
      if (delay === undefined) return this.giveUp(lastError);
      await this.pause(delay);
      if (this.stopped()) return;
      const attempt = ++this.attempts;
      try {
        const child = await this.options.start();
        if (this.stopped()) {
          await child.stop();
          return;
        }
        this.restarts++;
        this.budget.started(Date.now());
        this.state = 'up';
        this.adopt(child);
        logger?.info({ service, pid: child.pid, attempt, downMs: Date.now() - diedAt }, `embedded ${label} restarted`);
        return;
      } catch (err) {
        lastError = toError(err);
        logger?.warn({ service, attempt, err: summary(lastError), log: logFile }, `embedded ${label} did not start again; trying again`);
      }
    }
  }

  /** The wait before the next attempt, or undefined to give up: the budget's backoff, or while the process stops the short stopping delay within its window. */
  private nextDelay(policy: RestartPolicy, diedAt: number): number | undefined {
    if (this.hurriedAt === undefined) return this.budget.next();
    if (Date.now() - Math.max(this.hurriedAt, diedAt) > policy.stoppingWindowMs) return undefined;
    return this.attempts === 0 ? 0 : policy.stoppingDelayMs;
  }

  /** Whether stop() was called (read after each wait: it changes meanwhile). */
  private stopped(): boolean {
    return this.state === 'stopped';
  }

  private async pause(ms: number): Promise<void> {
    if (ms <= 0) return;
    this.wake = new AbortController();
    await sleep(ms, undefined, { signal: this.wake.signal }).catch(() => undefined);
    this.wake = undefined;
  }

  private giveUp(error: Error): void {
    if (this.stopped()) return;
    this.state = 'lost';
    const attempts = this.attempts;
    this.options.logger?.error(
      { service: this.options.service, attempts, err: summary(error), log: this.options.logFile },
      `embedded ${this.options.label} could not be restarted; read ${this.options.logFile}`,
    );
    this.resolveLost({ service: this.options.service, logFile: this.options.logFile, attempts, error, reason: summary(error) });
  }
}
