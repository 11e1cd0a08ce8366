/**
 * The process that runs the embedded services dies without stopping them (SIGKILL, as the OOM
 * killer does), with a second terminal's `npm run start:role -- api` attached:
 * - the next `npm start` stops the services the dead owner left behind, then starts them again on
 *   the ports recorded in services.json, so the attached process reconnects by itself and serves
 *   again (before: new ports every time, and the attached process dialled the old ones forever);
 * - DATA_DIR is its owner's only (invariant 12): after a fresh start nothing in it (the cluster
 *   behind the `postgres` link included) is open to other users; paths loosened meanwhile are
 *   named at the next start, one warning each, and made owner-only again when they are the
 *   platform's; a file of the user's is named and left.
 */
import { chmodSync, lstatSync, mkdtempSync, readdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/services/free-port.js';
import type { ServicesState } from '../../src/services/services-file.js';
import type { ApiClient } from '../support/http-client.js';
import { waitFor } from '../support/wait.js';
import { adminClient, Expectations, removeDataDir, startProduct, type ProductProcess } from './support/product.js';

const SETTINGS = { CRAWLER_HUMANIZE: 'false' };

/** Every path under `dir` (itself included) with its permission bits, following the `postgres` link; links themselves are left out. */
function modes(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (p: string) => {
    const stats = lstatSync(p);
    if (stats.isSymbolicLink()) {
      if (path.basename(p) === 'postgres') walk(realpathSync(p));
      return;
    }
    out[p] = `0${(stats.mode & 0o777).toString(8)}`;
    if (stats.isDirectory()) for (const entry of readdirSync(p)) walk(path.join(p, entry));
  };
  walk(dir);
  return out;
}

/** The paths of `modes(dir)` that a user other than the owner could read, write or list. */
function openToOthers(dir: string): Record<string, string> {
  return Object.fromEntries(Object.entries(modes(dir)).filter(([, mode]) => (parseInt(mode, 8) & 0o077) !== 0));
}

describe('npm start after its owner was killed', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'wp-e2e-crash-'));
  const expectations = new Expectations();
  const started: ProductProcess[] = [];
  let port: number;
  let owner: ProductProcess;
  let attached: ProductProcess;
  let attachedApi: ApiClient;
  const state = () => JSON.parse(readFileSync(path.join(dataDir, 'services.json'), 'utf8')) as ServicesState;

  beforeAll(async () => {
    port = await freePort();
    owner = await startProduct({ dataDir, port, env: SETTINGS });
    started.push(owner);
    attached = await startProduct({ dataDir, port: await freePort(), command: ['start:role', 'api'], env: SETTINGS });
    started.push(attached);
    attachedApi = await adminClient(attached.url!);
  });
  afterAll(async () => {
    // The attached process first, while the services it uses still run.
    await attached?.stop();
    for (const p of started) await p.stop();
    await removeDataDir(dataDir);
  });

  it('leaves nothing in a fresh DATA_DIR open to other users', () => {
    const all = modes(dataDir);
    // What is there: the lock, the services' record, Redis's folder (config, log, pid, AOF) and the cluster.
    for (const p of ['platform.pid', 'services.json', 'redis/redis.conf', 'redis/redis.log', 'redis/redis.pid', 'redis/appendonlydir'])
      expect(all[path.join(dataDir, p)], p).toBeDefined();
    expect(Object.keys(all).filter((p) => p.includes('appendonly.aof')).length).toBeGreaterThan(0);
    expect(Object.keys(all).some((p) => p.endsWith('PG_VERSION'))).toBe(true);
    expect(openToOthers(dataDir)).toEqual({});
    expect(all[path.join(dataDir, 'services.json')]).toBe('0600');
    expect(all[path.join(dataDir, 'redis')]).toBe('0700');
  });

  it('comes back on the recorded ports; the attached process reconnects; loosened paths are named and fixed', async () => {
    const before = state();
    const ports = { redis: before.redis!.port, postgres: before.postgres!.port };
    const leftRedis = Number(readFileSync(path.join(dataDir, 'redis/redis.pid'), 'utf8').trim());
    await owner.kill(); // SIGKILL to its process group: the services, in their own groups, keep running
    expect(state().owner?.pid).toBe(before.owner!.pid); // nobody cleared the record

    // Meanwhile someone loosens some paths, and leaves a file of their own in DATA_DIR.
    const loosened = {
      [path.join(dataDir, 'services.json')]: 0o644,
      [path.join(dataDir, 'redis/appendonlydir')]: 0o755,
      [path.join(dataDir, 'redis/redis.log')]: 0o640,
    };
    for (const [p, mode] of Object.entries(loosened)) chmodSync(p, mode);
    const notes = path.join(dataDir, 'notes.txt');
    writeFileSync(notes, 'mine');
    chmodSync(notes, 0o644);
    const attachedFrom = attached.lines().length;

    owner = await startProduct({ dataDir, port, env: SETTINGS });
    started.push(owner);
    const restartedAt = Date.now();

    expect(state().redis!.port).toBe(ports.redis);
    expect(state().postgres!.port).toBe(ports.postgres);
    expect(state().owner!.pid).not.toBe(before.owner!.pid);
    const lines = owner.lines();
    expect(lines.find((l) => l.msg === 'stopped the redis-server a previous owner of DATA_DIR left running')).toMatchObject({ pid: leftRedis });
    expect(lines.some((l) => l.msg === 'stopped the PostgreSQL server a previous owner of DATA_DIR left running')).toBe(true);

    // One warning per loosened path, naming it; the platform's made owner-only, the user's file left.
    const warned = Object.fromEntries(lines.filter((l) => l.level === 40 && typeof l.path === 'string').map((l) => [l.path, l.mode]));
    expect(warned).toEqual({
      ...Object.fromEntries(Object.entries(loosened).map(([p, m]) => [p, `0${m.toString(8)}`])),
      [notes]: '0644',
    });
    expect(openToOthers(dataDir)).toEqual({ [notes]: '0644' });
    expect(statSync(path.join(dataDir, 'services.json')).mode & 0o777).toBe(0o600);

    // The attached process was never restarted: its connections come back on the same ports.
    await waitFor(
      () =>
        attached
          .lines()
          .slice(attachedFrom)
          .some((l) => l.msg === 'redis connection restored'),
      { timeoutMs: 60_000, message: "the attached process's Redis connections restored" },
    );
    await waitFor(async () => (await attachedApi.get('/readyz')).status === 200, { timeoutMs: 60_000, message: 'the attached process ready' });
    const sent = await attachedApi.post('/api/sessions/after-owner-crash/messages', { role: 'user', content: 'through the attached process' });
    expect(sent.status).toBe(201);
    const ownerApi = await adminClient(owner.url!);
    const read = await ownerApi.get('/api/sessions/after-owner-crash/messages');
    expect(read.body.messages.map((m: { content: string }) => m.content)).toEqual(['through the attached process']);
    // And it is in the cluster again: its heartbeat goes on.
    const attachedId = /instance (\S+); attached/.exec(attached.output())![1]!;
    await waitFor(
      async () =>
        ((await ownerApi.get('/api/cluster')).body.instances as { id: string; lastSeen: string | number }[]).some(
          (i) => i.id === attachedId && new Date(i.lastSeen).getTime() > restartedAt,
        ),
      { timeoutMs: 30_000, message: 'the attached process heard from in the cluster' },
    );
    expect(attached.child.exitCode).toBeNull();
  }, 240_000);

  it('logged no error and failed no job that the test did not cause', () => {
    // The attached process met the outage while the new owner stopped and started the services.
    expectations.expectJobFailure((l) => /ECONNREFUSED|Connection terminated|terminating connection|shutting down|starting up/.test(String(l.err)));
    expect(started.flatMap((p) => expectations.unexpected(p.lines()))).toEqual([]);
  });
});
