/**
 * Requests over the API's routes while a dependency is down, for the outage tests
 * (test/api/outage-latency.test.ts in process, test/e2e/outages.test.ts through `npm start`):
 * fixtures made while everything is up, then a few hundred requests (authenticated reads and
 * writes of each domain, login, health, readiness, metrics, Bull Board's API) sent with a fixed
 * concurrency, each timed and kept with its answer, and the answers checked against what an outage
 * of that dependency allows:
 *
 * - an answer at all, within the client's limit (a hang check: the bound itself is the platform's
 *   HTTP_OUTAGE_DEADLINE_MS, and the figures are printed, not asserted);
 * - never a 500; /healthz always 200; no other 4xx than an empty pool or a login shed as busy;
 * - a 503 carries Retry-After and names the dependency: `<dependency>_unavailable`, or /readyz's
 *   `not_ready` with `field` naming it;
 * - a route with a documented fallback takes it when Redis is down: a pop served from the
 *   database (`source: "db"`), messages read from the database (`source: "db"`).
 */

export type Dependency = 'redis' | 'database';

export interface Fixtures {
  feedId: number;
  ipId: number;
  /** A task of the feed's first refresh. */
  taskId: string;
  session: string;
  poolGroup: number;
}

export interface Login {
  username: string;
  password: string;
}

export interface Call {
  name: string;
  method: string;
  path: string;
  body?: unknown;
  /** Sent without the token. */
  anonymous?: boolean;
}

export interface Answer {
  call: Call;
  status: number;
  ms: number;
  body: any;
  retryAfter: string | null;
  /** No answer: the client's limit passed (a hang) or the connection failed. */
  failure?: string;
}

interface Client {
  baseUrl: string;
  token: string;
}

async function send(client: Client, call: Call, timeoutMs: number): Promise<Answer> {
  const started = performance.now();
  try {
    const res = await fetch(client.baseUrl + call.path, {
      method: call.method,
      headers: {
        ...(call.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(call.anonymous ? {} : { authorization: `Bearer ${client.token}` }),
      },
      ...(call.body !== undefined ? { body: JSON.stringify(call.body) } : {}),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    const ms = performance.now() - started;
    let body: unknown = text;
    if ((res.headers.get('content-type') ?? '').includes('json') && text) body = JSON.parse(text);
    return { call, status: res.status, ms, body, retryAfter: res.headers.get('retry-after') };
  } catch (err) {
    return { call, status: 0, ms: performance.now() - started, body: undefined, retryAfter: null, failure: (err as Error).message };
  }
}

async function postTo(client: Client, path: string, body: unknown): Promise<any> {
  const a = await send(client, { name: 'fixture', method: 'POST', path, body }, 30_000);
  if (a.status >= 300) throw new Error(`fixture ${path}: ${a.status} ${JSON.stringify(a.body)}`);
  return a.body;
}

/**
 * A user of its own for the logins of one outage, so that outages never share the login limit's
 * counts of (user, address): what one leaves counted cannot turn the next one's logins into 429s.
 */
export async function makeLoginUser(client: Client, username: string): Promise<Login> {
  const login = { username, password: `outage-password-${username}` };
  await postTo(client, '/api/users', { ...login, role: 'user' });
  return login;
}

/** What the mix needs while everything is up: a feed, an IP, pool rows in the database, messages. */
export async function makeFixtures(client: Client): Promise<Fixtures> {
  const post = (path: string, body: unknown) => postTo(client, path, body);
  const feed = await post('/api/feeds', { url: 'http://127.0.0.1:9/outage-fixture.xml' });
  const ip = await post('/api/ips', { name: 'outage fixture', keyword: 'outage-fixture' });
  const poolGroup = 7;
  for (let batch = 0; batch < 4; batch++) {
    await post(`/api/pools/titles/${poolGroup}/items`, { items: Array.from({ length: 250 }, (_, i) => ({ text: `row ${batch}-${i}`, batchId: batch })) });
  }
  const session = 'outage-session';
  for (let i = 0; i < 5; i++) await post(`/api/sessions/${session}/messages`, { role: 'user', content: `before the outage ${i}` });
  return { feedId: feed.id, ipId: ip.id, taskId: feed.taskId, session, poolGroup };
}

/** `n` calls over every route of the mix, round robin; `tag` makes created names unique. */
export function outageCalls(f: Fixtures, login: Login, n: number, tag: string): Call[] {
  const mix: ((i: number) => Call)[] = [
    () => ({ name: 'healthz', method: 'GET', path: '/healthz', anonymous: true }),
    () => ({ name: 'readyz', method: 'GET', path: '/readyz', anonymous: true }),
    () => ({ name: 'login', method: 'POST', path: '/api/auth/login', body: login, anonymous: true }),
    () => ({ name: 'feeds list', method: 'GET', path: '/api/feeds' }),
    () => ({ name: 'feed read', method: 'GET', path: `/api/feeds/${f.feedId}` }),
    (i) => ({ name: 'feed create', method: 'POST', path: '/api/feeds', body: { url: `http://127.0.0.1:9/${tag}-${i}.xml` } }),
    () => ({ name: 'feed schedule', method: 'POST', path: '/api/queue/schedule-feed', body: { feed_id: f.feedId, force_immediate: true } }),
    () => ({ name: 'task read', method: 'GET', path: `/api/tasks/${f.taskId}` }),
    () => ({ name: 'ips list', method: 'GET', path: '/api/ips' }),
    () => ({ name: 'ip read', method: 'GET', path: `/api/ips/${f.ipId}` }),
    (i) => ({ name: 'ip create', method: 'POST', path: '/api/ips', body: { name: `${tag} ${i}`, keyword: `${tag}-${i}` } }),
    () => ({ name: 'ip crawl', method: 'POST', path: `/api/ips/${f.ipId}/crawl` }),
    () => ({ name: 'leaderboard', method: 'GET', path: '/api/leaderboard?type=liquidity&hours=24' }),
    () => ({ name: 'pool pop', method: 'POST', path: `/api/pools/titles/${f.poolGroup}/pop` }),
    (i) => ({ name: 'pool import', method: 'POST', path: `/api/pools/titles/${f.poolGroup}/items`, body: { items: [{ text: `${tag} ${i}`, batchId: 9 }] } }),
    () => ({ name: 'pools overview', method: 'GET', path: '/api/pools' }),
    (i) => ({ name: 'message write', method: 'POST', path: `/api/sessions/${f.session}/messages`, body: { role: 'user', content: `${tag} ${i}` } }),
    () => ({ name: 'message read', method: 'GET', path: `/api/sessions/${f.session}/messages?limit=20` }),
    () => ({ name: 'queues', method: 'GET', path: '/api/queues' }),
    () => ({ name: 'dead jobs', method: 'GET', path: '/api/dead-jobs' }),
    () => ({ name: 'cluster', method: 'GET', path: '/api/cluster' }),
    () => ({ name: 'users', method: 'GET', path: '/api/users' }),
    () => ({ name: 'metrics', method: 'GET', path: '/metrics' }),
    () => ({ name: 'bull board api', method: 'GET', path: '/admin/queues/api/queues' }),
  ];
  return Array.from({ length: n }, (_, i) => mix[i % mix.length]!(i));
}

/** Sends `calls` with `concurrency` in flight; each may take `timeoutMs` before it counts as unanswered. */
export async function drive(client: Client, calls: Call[], options: { concurrency: number; timeoutMs: number }): Promise<Answer[]> {
  const answers: Answer[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: options.concurrency }, async () => {
      while (next < calls.length) answers.push(await send(client, calls[next++]!, options.timeoutMs));
    }),
  );
  return answers;
}

/** What is wrong with the answers while `down` is down (nothing: an empty list). */
export function complaints(answers: Answer[], down: Dependency, boundMs: number): string[] {
  const out: string[] = [];
  const say = (a: Answer, what: string) => out.push(`${a.call.name} (${a.call.method} ${a.call.path}): ${what}`);
  for (const a of answers) {
    if (a.failure) {
      say(a, `no answer after ${Math.round(a.ms)} ms (${a.failure})`);
      continue;
    }
    if (a.ms > boundMs) say(a, `answered after ${Math.round(a.ms)} ms, past ${boundMs} ms`);
    const error = a.body?.error;
    if (a.call.name === 'healthz' && a.status !== 200) say(a, `status ${a.status}`);
    if (a.status === 503) {
      if (!a.retryAfter) say(a, '503 without Retry-After');
      const named = a.call.name === 'readyz' ? error?.code === 'not_ready' && error?.field === down : error?.code === `${down}_unavailable`;
      if (!named) say(a, `503 not naming ${down}: ${JSON.stringify(a.body).slice(0, 200)}`);
      continue;
    }
    if (a.status >= 500) {
      say(a, `status ${a.status}: ${JSON.stringify(a.body).slice(0, 200)}`);
      continue;
    }
    // Answers the routes give whatever the outage: an empty pool; logins shed while the password
    // threads are busy (login_busy, with Retry-After; the machine under test is loaded).
    const expected =
      (a.call.name === 'pool pop' && error?.code === 'pool_empty') || (a.call.name === 'login' && a.status === 429 && error?.code === 'login_busy');
    if (a.status >= 400 && !expected) say(a, `status ${a.status}: ${JSON.stringify(a.body).slice(0, 200)}`);
    if (down === 'redis' && a.status === 200 && (a.call.name === 'pool pop' || a.call.name === 'message read') && a.body?.source !== 'db') {
      say(a, `served from ${a.body?.source}, not from the database`);
    }
  }
  return out;
}

export interface Latency {
  n: number;
  p50: number;
  p99: number;
  max: number;
  /** Answers by status (0: none). */
  statuses: Record<number, number>;
  /** The routes whose slowest answers were the slowest, with those times. */
  slowest: [string, number][];
}

/** The p-th percentile of numbers sorted ascending. */
function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

export function latency(answers: Answer[]): Latency {
  const ms = answers.map((a) => a.ms).sort((a, b) => a - b);
  const statuses: Record<number, number> = {};
  for (const a of answers) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
  const worst = new Map<string, number>();
  for (const a of answers) worst.set(a.call.name, Math.max(worst.get(a.call.name) ?? 0, Math.round(a.ms)));
  const slowest = [...worst].sort((a, b) => b[1] - a[1]).slice(0, 3);
  return { n: ms.length, p50: Math.round(percentile(ms, 50)), p99: Math.round(percentile(ms, 99)), max: Math.round(ms.at(-1) ?? NaN), statuses, slowest };
}

/** One line of figures for the test's output (and the report). */
export function describeLatency(phase: string, l: Latency): string {
  const statuses = Object.entries(l.statuses)
    .map(([s, n]) => `${s === '0' ? 'none' : s}×${n}`)
    .join(' ');
  const slowest = l.slowest.map(([name, ms]) => `${name} ${ms} ms`).join(', ');
  return `${phase}: ${l.n} requests, p50 ${l.p50} ms, p99 ${l.p99} ms, max ${l.max} ms (${statuses}; slowest: ${slowest})`;
}
