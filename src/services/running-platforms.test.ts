import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { exited } from './child-process.js';
import { otherRunningPlatforms, recordRunningPlatform } from './running-platforms.js';

/**
 * The per-user record of running platforms: another process's record counts while it lives and
 * holds its DATA_DIR's lock; stale and foreign records are ignored; an unsafe runtime dir is not
 * used. The other platform is a real child process recording itself through this module.
 */
describe('running platforms of a checkout', () => {
  let tmp: string;
  let runtimeDir: string;
  const checkout = '/srv/checkouts/worker-platform';
  const children: ChildProcess[] = [];

  beforeEach(() => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'wp-running-'));
    runtimeDir = path.join(tmp, 'runtime');
  });
  afterEach(async () => {
    for (const c of children.splice(0)) {
      c.kill('SIGKILL');
      await exited(c);
    }
    rmSync(tmp, { recursive: true, force: true });
  });

  /**
   * Another platform process of `checkout`: it takes `dataDir`'s lock (platform.pid) and records
   * itself, as an owner of embedded services does; resolves once it has.
   */
  async function otherOwner(dataDir: string): Promise<ChildProcess> {
    const script = `
      import { mkdirSync, writeFileSync } from 'node:fs';
      import { recordRunningPlatform } from ${JSON.stringify(new URL('./running-platforms.ts', import.meta.url).pathname)};
      mkdirSync(${JSON.stringify(dataDir)}, { recursive: true });
      writeFileSync(${JSON.stringify(path.join(dataDir, 'platform.pid'))}, String(process.pid));
      recordRunningPlatform(${JSON.stringify(dataDir)}, { runtimeDir: ${JSON.stringify(runtimeDir)}, checkout: ${JSON.stringify(checkout)} });
      console.log('recorded');
      setTimeout(() => {}, 60_000);`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (d: Buffer) => d.toString().includes('recorded') && resolve());
      child.once('exit', (code) => reject(new Error(`the other owner exited (${code})`)));
    });
    return child;
  }

  it('records this process while it owns a DATA_DIR, privately, and removes the record', () => {
    const remove = recordRunningPlatform(path.join(tmp, 'mine'), { runtimeDir, checkout });
    const files = readdirSync(runtimeDir);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(new RegExp(`-${process.pid}\\.json$`));
    expect(statSync(runtimeDir).mode & 0o777).toBe(0o700);
    expect(statSync(path.join(runtimeDir, files[0]!)).mode & 0o777).toBe(0o600);
    // Its own record is not another platform.
    expect(otherRunningPlatforms({ runtimeDir, checkout })).toEqual([]);
    remove();
    expect(readdirSync(runtimeDir)).toEqual([]);
  });

  it('finds another live platform of this checkout; once it is killed, its record is dropped', async () => {
    const dataDir = path.join(tmp, 'theirs');
    const child = await otherOwner(dataDir);
    expect(otherRunningPlatforms({ runtimeDir, checkout })).toEqual([{ checkout, dataDir, pid: child.pid, startedAt: expect.any(String) }]);
    // Another checkout's platforms are not this one's.
    expect(otherRunningPlatforms({ runtimeDir, checkout: '/srv/checkouts/another' })).toEqual([]);

    // Killed, its record stays behind: it is no longer counted, and the stale record goes.
    child.kill('SIGKILL');
    await exited(child);
    expect(otherRunningPlatforms({ runtimeDir, checkout })).toEqual([]);
    expect(readdirSync(runtimeDir)).toEqual([]);
  });

  it('does not take a live process that no longer holds the DATA_DIR lock for a platform (a reused pid)', async () => {
    const dataDir = path.join(tmp, 'reused');
    await otherOwner(dataDir);
    writeFileSync(path.join(dataDir, 'platform.pid'), '1');
    expect(otherRunningPlatforms({ runtimeDir, checkout })).toEqual([]);
    expect(readdirSync(runtimeDir)).toEqual([]);
  });

  it('uses no runtime dir that others may read or write', () => {
    mkdirSync(runtimeDir, { mode: 0o700 });
    chmodSync(runtimeDir, 0o777);
    recordRunningPlatform(path.join(tmp, 'mine'), { runtimeDir, checkout });
    expect(readdirSync(runtimeDir)).toEqual([]);
    expect(otherRunningPlatforms({ runtimeDir, checkout })).toEqual([]);
  });
});
