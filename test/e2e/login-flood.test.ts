/**
 * Issue 26, as a user runs `npm start`: 400 concurrent logins, each with another unknown user
 * name, from one address (loopback) cost 400 bcrypt checks on the event loop: /healthz and an
 * authenticated read waited 25 s, and under load the leader lost its leases and the registry
 * heartbeat timed out. Now the address has its own limit (LOGIN_RATE_LIMIT_ADDRESS_MAX) and the
 * checks run on password threads: the test counts the checks (wp_auth_password_checks_total on
 * /metrics), and checks that health and an authenticated read were answered 200 throughout and
 * that the process kept every lease it held (same fencing tokens) and logged no lost lease or
 * failed heartbeat. Latency itself is measured by `npm run bench:login`, not asserted here.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/services/free-port.js';
import type { ApiClient } from '../support/http-client.js';
import { adminClient, Expectations, removeDataDir, startProduct, type ProductProcess } from './support/product.js';

const ADDRESS_LIMIT = 30; // the default LOGIN_RATE_LIMIT_ADDRESS_MAX

/** The sum of a counter's samples in Prometheus text. */
function counterSum(text: string, name: string): number {
  let sum = 0;
  for (const line of text.split('\n')) if (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) sum += Number(line.split(' ').at(-1));
  return sum;
}

describe('a login flood through npm start', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'wp-e2e-login-flood-'));
  const expectations = new Expectations();
  let product: ProductProcess;
  let api: ApiClient;

  beforeAll(async () => {
    // The flood's 400 connections and the probes all come from 127.0.0.1: the per-address connection
    // cap (HTTP_MAX_CONNECTIONS_PER_ADDRESS, 256) would close or refuse some of them before they log
    // in (test/api/connection-limits.test.ts). This test is about the login limit: the cap is lifted.
    product = await startProduct({ dataDir, port: await freePort(), env: { HTTP_ACCESS_LOG: 'false', HTTP_MAX_CONNECTIONS_PER_ADDRESS: '1000' } });
    api = await adminClient(product.url!);
  });
  afterAll(async () => {
    await product?.stop();
    await removeDataDir(dataDir);
  });

  const checks = async () => counterSum((await api.get('/metrics')).body as string, 'wp_auth_password_checks_total');
  const leads = async () => ((await api.get('/api/cluster')).body as { self: { leads: { work: string; token: number }[] } }).self.leads;

  it('checks at most LOGIN_RATE_LIMIT_ADDRESS_MAX passwords for 400 concurrent unknown-user logins from one address; health, reads, leases and heartbeats hold', async () => {
    const leadsBefore = await leads();
    expect(leadsBefore.length).toBeGreaterThan(0); // one process: it leads every singleton task
    const before = await checks();
    const anon = api.withToken(undefined);

    let flooding = true;
    const probes: { path: string; status: number }[] = [];
    const probe = async (p: string) => {
      while (flooding) probes.push({ path: p, status: (await api.get(p)).status });
    };
    const probing = Promise.all([probe('/healthz'), probe('/api/feeds')]);
    const answers = await Promise.all(
      Array.from({ length: 400 }, (_, i) => anon.post('/api/auth/login', { username: `intruder-${i}-${process.pid}`, password: 'guess' })),
    );
    flooding = false;
    await probing;

    const checked = (await checks()) - before;
    expect(checked).toBeLessThanOrEqual(ADDRESS_LIMIT);
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(checked);
    expect(statuses.filter((s) => s === 429)).toHaveLength(400 - checked);
    for (const p of ['/healthz', '/api/feeds']) {
      const answered = probes.filter((x) => x.path === p);
      expect(answered.length, p).toBeGreaterThan(0);
      expect(new Set(answered.map((x) => x.status)), p).toEqual(new Set([200]));
    }

    // The leases it held are the ones it holds (a lost and retaken lease has a new fencing token).
    expect(await leads()).toEqual(expect.arrayContaining(leadsBefore));
    const log = product.lines().map((l) => l.msg);
    expect(log.filter((m) => /lease lost|heartbeat failed/.test(m))).toEqual([]);
    expect(expectations.unexpected(product.lines())).toEqual([]);
  });
});
