import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * One process at a time may own the embedded services of a DATA_DIR: PGlite serves exactly one
 * connection, and two redis-servers must not share one AOF. The lock is a pid file; a lock left
 * by a dead process is taken over.
 */
export class DataDirLockedError extends Error {
  constructor(
    readonly pid: number,
    dataDir: string,
  ) {
    super(
      `another platform process (pid ${pid}) already runs the embedded Redis/PGlite in ${dataDir}. ` +
        'The embedded default is one process with every role; to run several processes set DATABASE_URL ' +
        '(and REDIS_URL) to shared servers, e.g. `docker compose up -d redis postgres`.',
    );
    this.name = 'DataDirLockedError';
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function lockDataDir(dataDir: string): { release(): void } {
  mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, 'platform.pid');
  try {
    writeFileSync(file, String(process.pid), { flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const owner = Number(readFileSync(file, 'utf8').trim());
    if (owner && owner !== process.pid && alive(owner)) throw new DataDirLockedError(owner, dataDir);
    writeFileSync(file, String(process.pid));
  }
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      try {
        if (readFileSync(file, 'utf8').trim() === String(process.pid)) rmSync(file);
      } catch {
        /* already gone */
      }
    },
  };
}
