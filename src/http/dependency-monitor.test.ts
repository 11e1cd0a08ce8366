/**
 * The dependency monitor with probes the test answers: the last verdicts read without waiting, one
 * probe at a time per dependency (a check joins the probe running), a probe past its limit taken
 * for "down", transitions logged and the wp_dependency_up gauge kept.
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { Metrics } from '../metrics/metrics.js';
import { DependencyMonitor, PROBE_TIMEOUT_MS, type DependencyProbe } from './dependency-monitor.js';

/** A probe whose answers the test gives, one per call. */
function controlled(name: DependencyProbe['name']) {
  const pending: ((up: boolean) => void)[] = [];
  let calls = 0;
  const probe: DependencyProbe = {
    name,
    check: () => {
      calls++;
      return new Promise<boolean>((resolve) => pending.push(resolve));
    },
  };
  return { probe, answer: (up: boolean) => pending.shift()!(up), calls: () => calls };
}

function logSink() {
  const lines: { msg: string; dependency?: string }[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: pino({ level: 'info' }, sink), lines };
}

describe('DependencyMonitor', () => {
  it('names the first dependency down by its last probe, joins a probe running, and logs transitions', async () => {
    const redis = controlled('redis');
    const database = controlled('database');
    const metrics = new Metrics({ defaultMetrics: false });
    const { logger, lines } = logSink();
    const monitor = new DependencyMonitor([redis.probe, database.probe], { intervalMs: 60_000, metrics, logger });
    expect(monitor.down()).toBeUndefined(); // nothing known yet: taken as up

    const first = monitor.check();
    const joined = monitor.check();
    expect([redis.calls(), database.calls()]).toEqual([1, 1]);
    redis.answer(true);
    database.answer(false);
    expect(await first).toEqual([
      ['redis', true],
      ['database', false],
    ]);
    expect(await joined).toEqual(await first);
    expect(monitor.down()).toBe('database');
    expect((await metrics.render()).body).toContain('wp_dependency_up{dependency="database"} 0');

    const second = monitor.check();
    redis.answer(false);
    database.answer(true);
    await second;
    expect(monitor.down()).toBe('redis');
    await new Promise((r) => setImmediate(r));
    expect(lines.map((l) => [l.msg.split(':')[0], l.dependency])).toEqual([
      ['dependency down', 'database'],
      ['dependency down', 'redis'],
      ['dependency answers again', 'database'],
    ]);
  });

  it(`takes a probe that has not answered within ${PROBE_TIMEOUT_MS} ms for down (a frozen dependency)`, async () => {
    const redis = controlled('redis');
    const monitor = new DependencyMonitor([redis.probe], { intervalMs: 60_000 });
    expect(await monitor.check()).toEqual([['redis', false]]);
    expect(monitor.down()).toBe('redis');
    redis.answer(true); // the late answer of the probe given up on changes nothing
    await new Promise((r) => setImmediate(r));
    expect(monitor.down()).toBe('redis');
  });

  it('probes every interval once started', async () => {
    let calls = 0;
    const monitor = new DependencyMonitor([{ name: 'redis', check: async () => (calls++, false) }], { intervalMs: 20 });
    monitor.start();
    try {
      for (let i = 0; i < 300 && calls < 3; i++) await new Promise((r) => setTimeout(r, 10));
      expect(calls).toBeGreaterThanOrEqual(3);
      expect(monitor.down()).toBe('redis');
    } finally {
      monitor.stop();
    }
  });
});
