/**
 * Tracing as an operator turns it on: `npm start` with OTEL_EXPORTER_OTLP_ENDPOINT pointing at a
 * collector (here a loopback OTLP receiver, test/support/otlp-receiver.ts, in the default
 * http/protobuf encoding). A crawl brought forward over the API is one trace: the request, the
 * crawl's run, its result's processing (the flow's parent job) and their database writes. What a
 * request or a job carries (the token, the password, a keyword, a message) is exported nowhere.
 *
 * Off (OTEL_ENABLED=false, even with the endpoint set), the same process exports nothing and
 * never loads an OpenTelemetry module: every ES module resolution of the platform's processes is
 * recorded (test/support/import-recorder.mjs, through NODE_OPTIONS), as a control with tracing on.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/services/free-port.js';
import type { ApiClient } from '../support/http-client.js';
import { OTLP_KIND, startOtlpReceiver, traceOf, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';
import { waitFor } from '../support/wait.js';
import { adminClient, DEFAULT_ADMIN, Expectations, removeDataDir, startProduct, type ProductProcess } from './support/product.js';

const RECORDER = pathToFileURL(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../support/import-recorder.mjs')).href;
/** Module URLs recorded: OpenTelemetry's, and bullmq's (loaded either way: shows the recorder works). */
const RECORDED = '/node_modules/(@opentelemetry/[^/]+|bullmq-otel|import-in-the-middle|bullmq)/';
const OTEL_MODULE = /\/node_modules\/(@opentelemetry\/|bullmq-otel\/|import-in-the-middle\/)/;

/** Settings shared by both processes: a one-page crawl without pauses, and the module recorder. */
function settings(recordFile: string): Record<string, string> {
  return {
    SCHEDULER_PAGES_ON_SALE: '1',
    SCHEDULER_PAGES_SOLD: '1',
    CRAWLER_HUMANIZE: 'false',
    NODE_OPTIONS: `--import=${RECORDER}`,
    WP_IMPORT_RECORD: recordFile,
    WP_IMPORT_RECORD_PATTERN: RECORDED,
  };
}

const recorded = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);

/** Creates an IP and waits until its first crawl's result is processed and its next crawl is pending. */
async function ipWithPendingCrawl(api: ApiClient, name: string, keyword: string): Promise<{ id: number; taskId: string }> {
  const created = await api.post('/api/ips', { name, keyword });
  expect(created.status).toBe(201);
  const first = created.body.currentCrawl.taskId as string;
  await waitFor(async () => (await api.get(`/api/tasks/result-${first}`)).body.state === 'completed', {
    timeoutMs: 180_000,
    intervalMs: 500,
    message: `the result of crawl ${first}`,
  });
  const next = await waitFor(
    async () => {
      const crawl = (await api.get(`/api/ips/${created.body.id}`)).body.currentCrawl;
      return crawl?.state === 'delayed' && crawl.taskId !== first ? (crawl.taskId as string) : undefined;
    },
    { timeoutMs: 30_000, message: 'the next crawl pending' },
  );
  return { id: created.body.id, taskId: next };
}

describe('tracing on: npm start exports one trace per request, through the jobs it causes', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'wp-e2e-tracing-'));
  // Beside DATA_DIR, not in it: the platform warns about files there that others may read.
  const recordFile = path.join(dataDir, '..', `${path.basename(dataDir)}-imports.log`);
  const expectations = new Expectations();
  let receiver: OtlpReceiver;
  let product: ProductProcess;
  let api: ApiClient;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    product = await startProduct({
      dataDir,
      port: await freePort(),
      env: { ...settings(recordFile), OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: 'wp-e2e', OTEL_BSP_SCHEDULE_DELAY: '200' },
    });
    api = await adminClient(product.url!);
  });
  afterAll(async () => {
    await product?.stop();
    await receiver?.stop();
    await removeDataDir(dataDir);
    rmSync(recordFile, { force: true });
  });

  it('links POST /api/ips/:id/crawl to the crawl run, its result processing and their database writes', async () => {
    const ip = await ipWithPendingCrawl(api, 'Traced title', 'otel-e2e-keyword');
    const triggered = await api.post(`/api/ips/${ip.id}/crawl`);
    expect(triggered.status).toBe(202);
    expect(triggered.body).toEqual({ task_id: ip.taskId, status: 'moved_forward' });
    await waitFor(async () => (await api.get(`/api/tasks/result-${ip.taskId}`)).body.state === 'completed', {
      timeoutMs: 180_000,
      intervalMs: 500,
      message: `the result of crawl ${ip.taskId}`,
    });

    const isPg = (s: ReceivedSpan) => s.attributes['db.system.name'] === 'postgresql';
    const writes = (s: ReceivedSpan) => isPg(s) && /^\s*(INSERT|UPDATE)\b/.test(String(s.attributes['db.query.text'] ?? ''));
    // Spans leave in batches: wait until every part of the trace has arrived.
    const found = await waitFor(
      () => {
        const request = receiver
          .spans()
          .find((s) => s.kind === OTLP_KIND.server && s.name === 'POST /api/ips/:id/crawl' && s.attributes['http.response.status_code'] === 202);
        if (!request) return undefined;
        const trace = traceOf(receiver.spans(), request.traceId);
        const processOf = (queue: string, jobId: string) =>
          trace.spans.find((s) => s.kind === OTLP_KIND.consumer && s.name === `process ${queue}` && s.attributes['bullmq.job.id'] === jobId);
        const crawl = processOf('crawl', ip.taskId);
        const result = processOf('crawl-result', `result-${ip.taskId}`);
        if (!crawl || !result) return undefined;
        const under = (ancestor: ReceivedSpan) => trace.spans.filter((s) => writes(s) && trace.ancestors(s).includes(ancestor));
        const resultWrites = under(result);
        if (!resultWrites.some((s) => /INSERT INTO item_snapshots/.test(String(s.attributes['db.query.text'])))) return undefined;
        return { request, trace, crawl, result, resultWrites, requestWrites: under(request) };
      },
      { timeoutMs: 30_000, intervalMs: 200, message: 'the trace of POST /api/ips/:id/crawl with the crawl and its result' },
    );
    const { request, trace, crawl, result, resultWrites, requestWrites } = found;

    expect(request.attributes['http.route']).toBe('/api/ips/:id/crawl');
    expect(request.parentSpanId).toBeUndefined(); // the trace begins with the request
    // The crawl runs in the request's trace (it was brought forward by it, under a promote span) ...
    const promote = trace.ancestors(crawl)[0]!;
    expect(promote).toMatchObject({ name: 'promote crawl', kind: OTLP_KIND.producer, attributes: { 'bullmq.job.id': ip.taskId } });
    expect(trace.ancestors(crawl)).toContain(request);
    expect(crawl.attributes['bullmq.worker.name']).toMatch(/^crawler@/);
    // ... the result's processing, the flow's parent, was added by that run ...
    expect(trace.ancestors(result)).toContain(crawl);
    expect(trace.ancestors(result).map((s) => s.name)).toEqual(expect.arrayContaining(['addNode crawl-result', 'addFlow crawl-result']));
    expect(result.attributes['bullmq.worker.name']).toMatch(/^pipeline@/);
    // ... and wrote the result, with the request's own write (the IP's next crawl) in the same trace.
    expect(resultWrites.map((s) => String(s.attributes['db.query.text']).split(/\s+/).slice(0, 3).join(' '))).toEqual(
      expect.arrayContaining(['INSERT INTO processed_results', 'INSERT INTO item_snapshots', 'UPDATE ips SET']),
    );
    expect(requestWrites.some((s) => /^UPDATE ips SET next_crawl_at/.test(String(s.attributes['db.query.text'])))).toBe(true);
    expect(trace.spans.some((s) => s.attributes['db.system.name'] === 'redis' && trace.ancestors(s).includes(crawl))).toBe(true);
    // Every span of the trace comes from the platform process, named by the settings.
    for (const s of trace.spans) expect(s.resource).toMatchObject({ 'service.name': 'wp-e2e', 'service.instance.id': expect.any(String) });
    // The next crawl the result scheduled is due later: added in this trace, it will run in a trace of its own.
    expect(trace.spans.some((s) => s.name === 'add crawl.crawl' && s.attributes['bullmq.job.id'] !== ip.taskId)).toBe(true);
  }, 300_000);

  it('exports nothing a request or a job carries: no token, password, payload, message or result', async () => {
    const message = 'otel-e2e message content 7f3a';
    expect((await api.post('/api/sessions/otel-e2e-session/messages', { role: 'user', content: message })).status).toBe(201);
    await waitFor(() => receiver.spans().some((s) => s.name === 'POST /api/sessions/:sessionId/messages'), {
      timeoutMs: 20_000,
      message: 'the message request exported',
    });
    const stopped = await product.stop();
    expect(stopped.clean).toBe(true); // the ordered stop flushed the last spans and exited 0

    const raw = Buffer.concat(receiver.requests().map((r) => r.body)).toString('latin1');
    expect(receiver.requests().every((r) => r.contentType === 'application/x-protobuf')).toBe(true);
    for (const secret of [api.token!, DEFAULT_ADMIN.password, 'otel-e2e-keyword', 'Traced title', message, 'otel-e2e-session', 'Bearer', 'authorization']) {
      expect(raw.includes(secret), `"${secret.slice(0, 20)}" exported`).toBe(false);
    }
    const spans = receiver.spans();
    expect(spans.length).toBeGreaterThan(50);
    const keys = new Set(spans.flatMap((s) => [...Object.keys(s.attributes), ...s.events.flatMap((e) => Object.keys(e.attributes))]));
    expect(keys.has('bullmq.job.result')).toBe(false);
    expect(keys.has('bullmq.job.progress')).toBe(false);
    // A Redis span names its command and nothing else (a script's arguments are job data and messages).
    for (const s of spans.filter((x) => x.attributes['db.system.name'] === 'redis')) expect(s.attributes['db.query.text']).toMatch(/^[a-z]+$/);
    // Queries carry their SQL with placeholders, never the values.
    expect(keys.has('db.query.parameter.0')).toBe(false);
    // The background loops start no traces: no root span of a Redis command or an idle poll.
    expect(spans.filter((s) => !s.parentSpanId && (s.kind === OTLP_KIND.client || s.kind === OTLP_KIND.internal))).toEqual([]);

    // OpenTelemetry was loaded by the platform process (the control of the test below).
    expect(recorded(recordFile).some((l) => /@opentelemetry\/sdk-trace-node\//.test(l))).toBe(true);
    expect(expectations.unexpected(product.lines())).toEqual([]);
  }, 120_000);
});

describe('tracing off: nothing exported, no OpenTelemetry module loaded', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'wp-e2e-tracing-off-'));
  const recordFile = path.join(dataDir, '..', `${path.basename(dataDir)}-imports.log`);
  const expectations = new Expectations();
  let receiver: OtlpReceiver;
  let product: ProductProcess;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    product = await startProduct({
      dataDir,
      port: await freePort(),
      env: { ...settings(recordFile), OTEL_ENABLED: 'false', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '200' },
    });
  });
  afterAll(async () => {
    await product?.stop();
    await receiver?.stop();
    await removeDataDir(dataDir);
    rmSync(recordFile, { force: true });
  });

  it('serves requests and runs jobs with the endpoint set and OTEL_ENABLED=false, exporting nothing', async () => {
    const api = await adminClient(product.url!);
    const ip = await ipWithPendingCrawl(api, 'Untraced title', 'otel-off-keyword');
    expect((await api.post(`/api/ips/${ip.id}/crawl`)).body).toEqual({ task_id: ip.taskId, status: 'moved_forward' });
    await waitFor(async () => (await api.get(`/api/tasks/result-${ip.taskId}`)).body.state === 'completed', {
      timeoutMs: 180_000,
      intervalMs: 500,
      message: `the result of crawl ${ip.taskId}`,
    });
    expect((await api.post('/api/sessions/otel-off/messages', { role: 'user', content: 'not traced' })).status).toBe(201);
    expect((await product.stop()).clean).toBe(true);

    expect(receiver.requests()).toEqual([]);
    expect(product.lines().some((l) => l.msg.startsWith('tracing'))).toBe(false);
    const lines = recorded(recordFile);
    expect(
      lines.some((l) => /\/node_modules\/bullmq\//.test(l)),
      'the recorder saw the platform load bullmq',
    ).toBe(true);
    expect(lines.filter((l) => OTEL_MODULE.test(l))).toEqual([]);
    expect(expectations.unexpected(product.lines())).toEqual([]);
  }, 300_000);
});
