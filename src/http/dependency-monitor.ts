/**
 * The dependency monitor of a process's HTTP server: what it knows now about Redis and the database, so
 * that a request overrunning its deadline is answered naming the dependency that is down, and
 * /readyz answers from the same probes.
 *
 * Each dependency is probed every HTTP_DEPENDENCY_CHECK_MS, one probe at a time (a probe still
 * running is joined, never doubled), each bounded by PROBE_TIMEOUT_MS: a probe that fails, answers
 * false or takes longer is a verdict of "down" (a frozen dependency answers nothing, so only the
 * limit tells). Reading is cheap: `down()` never waits. `check()` waits for fresh verdicts (joining
 * the probes in flight), for /readyz.
 *
 * Transitions are logged: a frozen Redis or database drops no connection, so nothing else would
 * say that it stopped answering.
 */
import type { Logger } from '../logging/logger.js';
import type { Metrics } from '../metrics/metrics.js';
import { withTimeout } from '../lib/timeout.js';
import type { Dependency } from './error-reply.js';

export interface DependencyProbe {
  /**
   * The key in /readyz. A request overrunning its deadline is told about the probes named after a
   * dependency (redis, database); others (an embedded service's state) show in /readyz only.
   */
  name: Dependency | `embedded-${string}`;
  /** Resolves true when the dependency answers. */
  check(): Promise<boolean>;
}

const isDependency = (name: DependencyProbe['name']): name is Dependency => !name.startsWith('embedded-');

/** The limit of one probe (/readyz's documented bound). */
export const PROBE_TIMEOUT_MS = 2000;

interface ProbeState {
  probe: DependencyProbe;
  /** The last verdict; undefined before the first probe ended (taken as up). */
  up: boolean | undefined;
  running: Promise<boolean> | undefined;
}

export interface MonitorOptions {
  intervalMs: number;
  metrics?: Metrics;
  logger?: Logger;
}

export class DependencyMonitor {
  private readonly states: ProbeState[];
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    probes: DependencyProbe[],
    private readonly options: MonitorOptions,
  ) {
    this.states = probes.map((probe) => ({ probe, up: undefined, running: undefined }));
  }

  /** Probes now and then every interval. The timer does not keep the process alive. */
  start(): void {
    if (this.timer || this.stopped) return;
    void this.check();
    this.timer = setInterval(() => void this.check(), this.options.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** The first dependency found down by its last probe, if any. Never waits. */
  down(): Dependency | undefined {
    for (const s of this.states) if (s.up === false && isDependency(s.probe.name)) return s.probe.name;
    return undefined;
  }

  /** Fresh verdicts of every dependency (a probe already running is joined). */
  async check(): Promise<[DependencyProbe['name'], boolean][]> {
    return Promise.all(this.states.map(async (s) => [s.probe.name, await this.run(s)] as [DependencyProbe['name'], boolean]));
  }

  private run(s: ProbeState): Promise<boolean> {
    if (s.running) return s.running;
    const { name } = s.probe;
    const running = withTimeout(() => s.probe.check(), PROBE_TIMEOUT_MS, { error: () => new Error(`${name} probe took longer than ${PROBE_TIMEOUT_MS} ms`) })
      .catch(() => false)
      .then((up) => {
        s.running = undefined;
        this.record(s, up);
        return up;
      });
    s.running = running;
    return running;
  }

  private record(s: ProbeState, up: boolean): void {
    const was = s.up;
    s.up = up;
    this.options.metrics?.dependencyUp.set({ dependency: s.probe.name }, up ? 1 : 0);
    if (was === up || this.stopped) return;
    if (!up) this.options.logger?.warn({ dependency: s.probe.name }, 'dependency down: requests that need it are answered 503');
    else if (was === false) this.options.logger?.info({ dependency: s.probe.name }, 'dependency answers again');
  }
}
