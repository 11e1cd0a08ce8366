/**
 * DATA_DIR is its owner's only (invariant 12): at start the owner names, one warning a path,
 * whatever there other users could read, makes the platform's own paths owner-only again
 * (following the `postgres` link into a cluster kept elsewhere), and leaves what is not the
 * platform's as it is.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { securePrivateDataDir } from '../../src/services/private-data-dir.js';

const mode = (p: string) => statSync(p).mode & 0o777;

describe('a loosened DATA_DIR', () => {
  const base = mkdtempSync(path.join(os.tmpdir(), 'wp-private-'));
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  it('is named path by path; the platform’s paths are made owner-only, anything else is left', () => {
    const dataDir = path.join(base, 'data');
    const cluster = path.join(base, 'cluster-elsewhere');
    mkdirSync(path.join(dataDir, 'redis/appendonlydir'), { recursive: true });
    mkdirSync(cluster);
    const file = (p: string, m: number) => {
      writeFileSync(p, 'x');
      chmodSync(p, m);
    };
    file(path.join(dataDir, 'services.json'), 0o644);
    file(path.join(dataDir, 'platform.pid'), 0o600);
    file(path.join(dataDir, 'redis/redis.conf'), 0o600);
    file(path.join(dataDir, 'redis/appendonlydir/appendonly.aof.1.incr.aof'), 0o640);
    file(path.join(dataDir, 'notes.txt'), 0o644); // the user's, not the platform's
    file(path.join(cluster, 'server.log'), 0o644);
    chmodSync(path.join(dataDir, 'redis/appendonlydir'), 0o755);
    chmodSync(path.join(dataDir, 'redis'), 0o700);
    chmodSync(dataDir, 0o755);
    chmodSync(cluster, 0o700);
    symlinkSync(cluster, path.join(dataDir, 'postgres'));

    const lines: { level: number; msg: string; path?: string; mode?: string }[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l));
        done();
      },
    });
    const found = securePrivateDataDir(dataDir, pino({ level: 'info' }, sink));

    const loosened = {
      [dataDir]: '0755',
      [path.join(dataDir, 'services.json')]: '0644',
      [path.join(dataDir, 'redis/appendonlydir')]: '0755',
      [path.join(dataDir, 'redis/appendonlydir/appendonly.aof.1.incr.aof')]: '0640',
      [path.join(dataDir, 'notes.txt')]: '0644',
      [path.join(cluster, 'server.log')]: '0644',
    };
    expect(Object.fromEntries(lines.map((l) => [l.path, l.mode]))).toEqual(loosened);
    expect(lines.every((l) => l.level === 40 && l.msg.startsWith(`${l.path} `))).toBe(true);
    expect(found.filter((f) => !f.fixed).map((f) => f.path)).toEqual([path.join(dataDir, 'notes.txt')]);
    expect(lines.find((l) => l.path === path.join(dataDir, 'notes.txt'))!.msg).toMatch(/not the platform's/);

    // Made owner-only: folders 0700, files 0600; the user's file untouched.
    expect(mode(dataDir)).toBe(0o700);
    expect(mode(path.join(dataDir, 'services.json'))).toBe(0o600);
    expect(mode(path.join(dataDir, 'redis/appendonlydir'))).toBe(0o700);
    expect(mode(path.join(dataDir, 'redis/appendonlydir/appendonly.aof.1.incr.aof'))).toBe(0o600);
    expect(mode(path.join(cluster, 'server.log'))).toBe(0o600);
    expect(mode(path.join(dataDir, 'notes.txt'))).toBe(0o644);

    // Checked again: only the user's file is still named.
    expect(securePrivateDataDir(dataDir).map((f) => f.path)).toEqual([path.join(dataDir, 'notes.txt')]);
  });
});
