import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { alive } from './child-process.js';

/**
 * One process at a time owns (starts and stops) the embedded services of a DATA_DIR: two
 * redis-servers must not share one AOF, nor two postmasters one cluster. The lock is a pid file
 * created exclusively; a lock left by a dead process is taken over. A process that finds the
 * lock held by a live one attaches to that owner's services instead (provide-services.ts).
 */
export type DataDirLock = { owned: true; release(): void } | { owned: false; owner: number };

function owned(file: string): DataDirLock {
  let released = false;
  return {
    owned: true,
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

export function lockDataDir(dataDir: string): DataDirLock {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 }); // private: see private-data-dir.ts
  const file = path.join(dataDir, 'platform.pid');
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx', mode: 0o600 });
      return owned(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    let owner: number;
    try {
      owner = Number(readFileSync(file, 'utf8').trim());
    } catch {
      continue; // removed in between: try again
    }
    if (owner === process.pid) return owned(file);
    if (owner && alive(owner)) return { owned: false, owner };
    // A stale lock: remove it and race for it like everyone else (exclusive create decides).
    rmSync(file, { force: true });
  }
  throw new Error(`could not take the lock ${file}`);
}
