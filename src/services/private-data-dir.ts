/**
 * Keeps DATA_DIR private to its owner: it holds the generated passwords (services.json,
 * redis.conf), Redis's data (every job, cached message and revoked token, in the AOF files) and
 * the PostgreSQL cluster. What the platform creates there is owner-only: folders 0700, files
 * 0600 (platform.pid, services.json, the redis folder; redis-server runs with umask 0077, see
 * redis-server-process.ts; PostgreSQL keeps its own folder 0700).
 *
 * At start the owner of DATA_DIR walks it (following the `postgres` link into a cluster kept
 * outside it) and warns, one line per path, about anything its group or other users may read,
 * write or list. What the platform made there it makes owner-only again; anything else it only
 * names. A folder that others may enter but not list (mode 0711) is private enough: running as
 * root with the cluster inside DATA_DIR, the `postgres` user must pass through DATA_DIR.
 */
import { chmodSync, existsSync, lstatSync, readdirSync, realpathSync, type Stats } from 'node:fs';
import path from 'node:path';
import type { Logger } from '../logging/logger.js';

/** Entries of DATA_DIR that the platform makes (with everything under them). */
const PLATFORM_ENTRIES = [/^services\.json(\.\d+\.tmp)?$/, /^platform\.pid$/, /^redis$/, /^postgres$/, /^chromium$/];
/** Warnings logged one per path; past this many, one line counts the rest. */
const MAX_WARNINGS = 20;

export interface LoosePath {
  path: string;
  /** Its permission bits when found (e.g. 0o644). */
  mode: number;
  /** Whether it was made owner-only. */
  fixed: boolean;
}

/** Whether group or others may read or write it (or list it, for a folder). Search (x) alone on a folder is allowed. */
function loose(stats: Stats): boolean {
  return (stats.mode & (stats.isDirectory() ? 0o066 : 0o077)) !== 0;
}

/** The mode that makes `stats` owner-only: the owner's bits kept, the rest cleared (a folder others must pass through keeps their x). */
function ownerOnly(stats: Stats, keepSearch: boolean): number {
  return (stats.mode & 0o700) | (keepSearch ? 0o011 : 0);
}

function octal(mode: number): string {
  return `0${(mode & 0o777).toString(8)}`;
}

/**
 * Finds what in DATA_DIR others can read, makes the platform's own paths owner-only, and warns
 * about each (see the header). Returns what it found.
 */
export function securePrivateDataDir(dataDir: string, logger?: Logger): LoosePath[] {
  const found: LoosePath[] = [];
  const root = path.resolve(dataDir);
  if (!existsSync(root)) return found;
  // As root with the cluster in DATA_DIR itself (not linked), the postgres user passes through DATA_DIR.
  const pgEntry = path.join(root, 'postgres');
  const clusterInside = process.getuid?.() === 0 && existsSync(pgEntry) && !lstatSync(pgEntry).isSymbolicLink();

  /** Checks `file` (and, with `recurse`, everything under it); makes it owner-only when the platform made it. */
  const visit = (file: string, platformMade: boolean, recurse = true, keepSearch = false): void => {
    let stats: Stats;
    try {
      stats = lstatSync(file);
    } catch {
      return; // gone meanwhile
    }
    if (stats.isSymbolicLink()) return; // a link's own mode means nothing; only the postgres link is followed (below)
    if (loose(stats)) {
      let fixed = false;
      if (platformMade) {
        try {
          chmodSync(file, ownerOnly(stats, keepSearch));
          fixed = true;
        } catch {
          /* not ours to change (another user's file): named below */
        }
      }
      found.push({ path: file, mode: stats.mode & 0o777, fixed });
    }
    if (!recurse || !stats.isDirectory()) return;
    let entries: string[];
    try {
      entries = readdirSync(file);
    } catch {
      return;
    }
    for (const entry of entries) visit(path.join(file, entry), platformMade);
  };

  visit(root, true, false, clusterInside);
  for (const entry of readdirSync(root))
    visit(
      path.join(root, entry),
      PLATFORM_ENTRIES.some((p) => p.test(entry)),
    );
  if (existsSync(pgEntry) && lstatSync(pgEntry).isSymbolicLink()) visit(realpathSync(pgEntry), true);
  for (const loosePath of found.slice(0, MAX_WARNINGS)) {
    logger?.warn(
      { path: loosePath.path, mode: octal(loosePath.mode) },
      loosePath.fixed
        ? `${loosePath.path} was open to other users (mode ${octal(loosePath.mode)}); made owner-only`
        : `${loosePath.path} is open to other users (mode ${octal(loosePath.mode)}); it is not the platform's, so it is left as it is: restrict it or move it out of DATA_DIR`,
    );
  }
  if (found.length > MAX_WARNINGS)
    logger?.warn({ dataDir: root, more: found.length - MAX_WARNINGS }, `${found.length - MAX_WARNINGS} more paths in DATA_DIR were open to other users`);
  return found;
}
