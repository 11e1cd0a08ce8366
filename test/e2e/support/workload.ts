/**
 * Work kept in flight against a running platform, for the outage e2e (test/e2e/outages-in-flight.test.ts):
 * a few clients over HTTP, each in its own loop until `stop()`, each recording what the platform
 * acknowledged, so that the test can check nothing acknowledged is lost or doubled:
 *
 * - message writers: each appends to its own sessions, one message after another, and records every
 *   message answered 201 (contents `<writer>:<index>`, so the read-back can be put in send order);
 * - feed triggers: `POST /api/queue/schedule-feed {force_immediate}` for each feed in turn;
 * - crawl triggers: `POST /api/ips/:id/crawl` for each IP in turn;
 * - pool poppers: `POST /api/pools/:type/:group/pop-many` and every row served (id, text).
 *
 * Every request is timed and tagged with the current phase (`phase`), for the latency figures.
 * An answer an outage allows is a 503 (the dependency named, Retry-After) or the route's own; any
 * other (a 500, an unexpected 4xx, no answer within CLIENT_LIMIT_MS: a hang) is kept in
 * `complaints`, which the test expects empty.
 */
import { setTimeout as sleep } from 'node:timers/promises';

/** The hang check; the platform's own bound is HTTP_OUTAGE_DEADLINE_MS (5 s). */
const CLIENT_LIMIT_MS = 40_000;
/** Messages per session: a read returns at most 1000 (MAX_READ_LIMIT), all of one session are checked at once. */
const SESSION_MESSAGES = 800;

export interface Timed {
  phase: string;
  route: string;
  status: number;
  ms: number;
}

interface Answer {
  status: number;
  body: any;
  retryAfter: string | null;
}

export interface Served {
  pool: string;
  id: string;
  text: string;
}

export interface WriterRecord {
  writer: string;
  /** Sessions in the order written, with the indexes sent to each (all, and the acknowledged ones). */
  sessions: { id: string; sent: number[]; acknowledged: number[] }[];
}

export interface WorkloadTargets {
  baseUrl: string;
  token: string;
  /** Tags the session ids (one run's sessions apart from another's). */
  tag: string;
  writers: number;
  feedIds: number[];
  ipIds: number[];
  /** `titles/1` style: each popper takes one, in turn. */
  pools: string[];
  poppers: number;
}

export class Workload {
  phase = 'start';
  readonly timings: Timed[] = [];
  readonly complaints: string[] = [];
  readonly writers: WriterRecord[] = [];
  readonly served: Served[] = [];
  /** Triggers the platform accepted (202). */
  readonly triggered = { feeds: 0, crawls: 0 };
  private running = true;
  private loops: Promise<void>[] = [];

  constructor(private readonly t: WorkloadTargets) {}

  start(): void {
    for (let w = 0; w < this.t.writers; w++) this.loops.push(this.writeLoop(`w${w}`));
    this.loops.push(this.triggerLoop('feed', this.t.feedIds, 1250, (id) => ['/api/queue/schedule-feed', { feed_id: id, force_immediate: true }]));
    this.loops.push(this.triggerLoop('crawl', this.t.ipIds, 3000, (id) => [`/api/ips/${id}/crawl`, undefined]));
    for (let p = 0; p < this.t.poppers; p++) this.loops.push(this.popLoop(this.t.pools[p % this.t.pools.length]!));
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  private async send(route: string, method: string, path: string, body?: unknown): Promise<Answer | undefined> {
    const started = performance.now();
    const phase = this.phase;
    try {
      const res = await fetch(this.t.baseUrl + path, {
        method,
        headers: { authorization: `Bearer ${this.t.token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(CLIENT_LIMIT_MS),
      });
      const text = await res.text();
      this.timings.push({ phase, route, status: res.status, ms: performance.now() - started });
      const parsed = (res.headers.get('content-type') ?? '').includes('json') && text ? JSON.parse(text) : text;
      const answer = { status: res.status, body: parsed, retryAfter: res.headers.get('retry-after') };
      if (answer.status === 503 && (!answer.retryAfter || !/_unavailable$|^not_ready$|^request_timeout$/.test(answer.body?.error?.code ?? '')))
        this.complaints.push(`${phase}: ${method} ${path}: 503 without Retry-After or a dependency named: ${text.slice(0, 200)}`);
      else if (answer.status >= 500 && answer.status !== 503) this.complaints.push(`${phase}: ${method} ${path}: ${answer.status} ${text.slice(0, 300)}`);
      return answer;
    } catch (err) {
      const ms = performance.now() - started;
      this.timings.push({ phase, route, status: 0, ms });
      this.complaints.push(`${phase}: ${method} ${path}: no answer after ${Math.round(ms)} ms (${(err as Error).message})`);
      return undefined;
    }
  }

  /** A 4xx or other answer the route never gives, outage or not. */
  private unexpected(what: string, a: Answer): void {
    this.complaints.push(`${this.phase}: ${what}: ${a.status} ${JSON.stringify(a.body).slice(0, 300)}`);
  }

  private async writeLoop(writer: string): Promise<void> {
    const record: WriterRecord = { writer, sessions: [] };
    this.writers.push(record);
    let session: WriterRecord['sessions'][number] | undefined;
    for (let i = 0; this.running; i++) {
      if (!session || session.sent.length >= SESSION_MESSAGES) {
        session = { id: `${this.t.tag}-${writer}-s${record.sessions.length}`, sent: [], acknowledged: [] };
        record.sessions.push(session);
      }
      session.sent.push(i);
      const a = await this.send('message append', 'POST', `/api/sessions/${session.id}/messages`, {
        role: i % 2 ? 'assistant' : 'user',
        content: `${writer}:${i}`,
      });
      if (a?.status === 201) session.acknowledged.push(i);
      else if (a && a.status !== 503) this.unexpected('message append', a);
      await sleep(150);
    }
  }

  private async triggerLoop(kind: 'feed' | 'crawl', ids: number[], pauseMs: number, call: (id: number) => [string, unknown]): Promise<void> {
    for (let i = 0; this.running; i++) {
      const [path, body] = call(ids[i % ids.length]!);
      const a = await this.send(`${kind} trigger`, 'POST', path, body);
      if (a?.status === 202) this.triggered[kind === 'feed' ? 'feeds' : 'crawls']++;
      else if (a && a.status !== 503) this.unexpected(`${kind} trigger`, a);
      await sleep(pauseMs);
    }
  }

  private async popLoop(pool: string): Promise<void> {
    while (this.running) {
      const a = await this.send('pool pop-many', 'POST', `/api/pools/${pool}/pop-many`, { count: 4 });
      if (a?.status === 200)
        for (const item of a.body.items as { id: string; text: string }[]) this.served.push({ pool, id: String(item.id), text: item.text });
      else if (a && a.status !== 503) this.unexpected('pool pop-many', a);
      await sleep(250);
    }
  }
}

/** The p-th percentile of numbers sorted ascending. */
function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/** One line per phase: requests, p50/p99/max, answers by status. */
export function latencyByPhase(timings: Timed[]): string[] {
  const phases = [...new Set(timings.map((t) => t.phase))];
  return phases.map((phase) => {
    const of = timings.filter((t) => t.phase === phase);
    const ms = of.map((t) => t.ms).sort((a, b) => a - b);
    const statuses: Record<number, number> = {};
    for (const t of of) statuses[t.status] = (statuses[t.status] ?? 0) + 1;
    const by = Object.entries(statuses)
      .map(([s, n]) => `${s === '0' ? 'none' : s}×${n}`)
      .join(' ');
    return `${phase}: ${of.length} requests, p50 ${Math.round(percentile(ms, 50))} ms, p99 ${Math.round(percentile(ms, 99))} ms, max ${Math.round(ms.at(-1) ?? NaN)} ms (${by})`;
  });
}
