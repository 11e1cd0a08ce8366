/**
 * What the parts of `npm run bench:scale` (bench/scale.ts) share: the platform's objects built
 * from one Redis and one database (as bench:pipeline builds them), Redis and PostgreSQL size
 * readings, set-based bulk loads with the secondary indexes built afterwards, CPU time of every
 * process involved, the platform's and the plain baseline's operations timed in turns (a burst of
 * due jobs, single adds), and the record of every figure by step, from which the summary computes
 * how each per-item cost grew from the smallest step to the largest.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue, Worker } from 'bullmq';
import type pg from 'pg';
import { loadConfig, type Config } from '../src/config/index.js';
import { createDatabase, type Database } from '../src/db/client.js';
import { silentLogger } from '../src/logging/logger.js';
import { QueueRegistry } from '../src/queues/registry.js';
import { connectionOptions, waitForReady, type RedisClient } from '../src/redis/connection.js';
import { RedisConnections } from '../src/redis/connections.js';
import { createKeys, type Keys } from '../src/redis/keys.js';
import { percentile } from './stats.js';

export const logger = silentLogger();

export interface Env {
  config: Config;
  connections: RedisConnections;
  redis: RedisClient;
  keys: Keys;
  queues: QueueRegistry;
  db: Database;
  meter: CpuMeter;
  ctx: { config: Config; logger: typeof logger; keys: Keys; redis: RedisClient; queues: QueueRegistry; db: Database };
  close(): Promise<void>;
}

/** The platform's context pieces on one Redis and one database (settings in `extra`). */
export async function openEnv(redis: { url: string; pid: number }, dbUrl: string, extra: Record<string, string> = {}): Promise<Env> {
  const redisUrl = redis.url;
  // Long command timeouts: a bulk add of 1,000 jobs beside a million others on a loaded machine
  // took longer than the queue connections' 3 s default (a cost to measure, not an outage).
  const config = loadConfig({
    REDIS_URL: redisUrl,
    DATABASE_URL: dbUrl,
    LOG_LEVEL: 'silent',
    REDIS_COMMAND_TIMEOUT_MS: '60000',
    REDIS_QUEUE_COMMAND_TIMEOUT_MS: '60000',
    ...extra,
  });
  const keys = createKeys(config.redis.prefix);
  const connections = new RedisConnections({ kind: 'single', url: redisUrl }, connectionOptions(config), logger);
  const client = connections.create('command', 'bench-scale');
  await waitForReady(client);
  const queues = new QueueRegistry({ config, connections, keys });
  const db = createDatabase({ url: dbUrl, poolSize: 10 });
  const meter = new CpuMeter(redis.pid, await CpuMeter.postmasterOf(db.pool));
  return {
    meter,
    config,
    connections,
    redis: client,
    keys,
    queues,
    db,
    ctx: { config, logger, keys, redis: client, queues, db },
    close: async () => {
      await queues.close();
      await db.close();
      await connections.close();
    },
  };
}

// ---- sizes ---------------------------------------------------------------------------------

/** used_memory once Redis has finished growing its hash tables (incremental rehashing holds two tables meanwhile). */
export async function usedMemory(redis: RedisClient): Promise<number> {
  await sleep(2000);
  const info = await redis.info('memory');
  return Number(/used_memory:(\d+)/.exec(info)![1]);
}

/** used_memory as Redis prints it (e.g. 13.03M), for the step lines. */
export async function usedMemoryHuman(redis: RedisClient): Promise<string> {
  return /used_memory_human:(\S+)/.exec(await redis.info('memory'))![1]!;
}

/** MEMORY USAGE of a key (every element counted), 0 when it does not exist. */
export async function keyBytes(redis: RedisClient, key: string): Promise<number> {
  return Number((await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0')) ?? 0);
}

/** pg_total_relation_size (heap, indexes, TOAST) of each table, in bytes. */
export async function tableBytes(pool: pg.Pool, tables: string[]): Promise<Record<string, number>> {
  const { rows } = await pool.query<{ t: string; b: string }>(`SELECT t, pg_total_relation_size(t::regclass)::text AS b FROM unnest($1::text[]) t`, [tables]);
  return Object.fromEntries(rows.map((r) => [r.t, Number(r.b)]));
}

export const mb = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MB`;
export const int = (n: number) => Math.round(n).toLocaleString('en-US');
export const us = (ms: number) => `${(ms * 1000).toFixed(1)} µs`;

/**
 * Empties `table` (and what references it) and runs `load` with the table's secondary indexes
 * dropped, then builds them again from their own definitions, analyzes the table and checkpoints:
 * a bulk load of millions of rows into a B-tree on random keys costs many times the sort that builds it.
 */
export async function reload(pool: pg.Pool, table: string, load: () => Promise<void>): Promise<number> {
  const started = performance.now();
  await pool.query(`TRUNCATE ${table} RESTART IDENTITY CASCADE`);
  const { rows: indexes } = await pool.query<{ name: string; def: string }>(
    `SELECT i.relname AS name, pg_get_indexdef(i.oid) AS def
       FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
      WHERE x.indrelid = $1::regclass AND NOT x.indisprimary
        AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.oid)`,
    [table],
  );
  for (const i of indexes) await pool.query(`DROP INDEX "${i.name}"`);
  await load();
  await pool.query(`SET maintenance_work_mem = '512MB'`).catch(() => undefined);
  for (const i of indexes) await pool.query(i.def);
  await pool.query(`VACUUM ANALYZE ${table}`);
  // Write out what the load dirtied now, not during the first measured phase: the meter counts
  // every PostgreSQL process's CPU, the checkpointer's too, and after a 10M-row load that backlog
  // is gigabytes (it made the pool's marking 1.66–1.78x per row at 10M in two runs, 0.85–1.15x with
  // this). A table that grew over months has no such backlog.
  await pool.query('CHECKPOINT');
  return (performance.now() - started) / 1000;
}

/** Inserts rows `from`..`to` with `sql` ($1, $2: the bounds of generate_series), in chunks so no statement runs for minutes. */
export async function insertSeries(pool: pg.Pool, sql: string, from: number, to: number, chunk = 1_000_000): Promise<void> {
  for (let lo = from; lo <= to; lo += chunk) await pool.query(sql, [lo, Math.min(to, lo + chunk - 1)]);
}

// ---- CPU time ------------------------------------------------------------------------------

/** Clock ticks of /proc/<pid>/stat: 100 a second on Linux. */
const TICK_US = 10_000;

function statFields(pid: number): string[] {
  // "pid (comm) state ppid ...": comm may hold spaces, so split after its ')'.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** utime + stime of a process (µs), and with `children` the CPU of its children it has reaped. */
function cpuOf(pid: number, children = false): number {
  try {
    const f = statFields(pid);
    return (Number(f[11]) + Number(f[12]) + (children ? Number(f[13]) + Number(f[14]) : 0)) * TICK_US;
  } catch {
    return 0; // gone
  }
}

/**
 * CPU time used by the bench process, redis-server, PostgreSQL (the postmaster, its live backends
 * and those that exited, which the postmaster reaped) and any extra processes (a server child).
 * CPU per item stays close to the truth on a machine whose load makes wall times swing.
 */
export class CpuMeter {
  constructor(
    private readonly redisPid: number,
    private readonly postmasterPid: number,
  ) {}

  /** The postmaster's pid, from a backend of the pool (its parent). */
  static async postmasterOf(pool: pg.Pool): Promise<number> {
    const { rows } = await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    return Number(statFields(rows[0]!.pid)[1]);
  }

  /** Total CPU µs so far (compare two readings). */
  read(extraPids: number[] = []): number {
    const { user, system } = process.cpuUsage();
    let pgCpu = cpuOf(this.postmasterPid, true);
    for (const d of readdirPids()) {
      try {
        if (Number(statFields(d)[1]) === this.postmasterPid) pgCpu += cpuOf(d);
      } catch {
        // gone meanwhile
      }
    }
    return user + system + cpuOf(this.redisPid) + pgCpu + extraPids.reduce((n, pid) => n + cpuOf(pid), 0);
  }

  /** Runs `work` and answers its wall and CPU time (ms and µs). */
  async measure<T>(work: () => Promise<T>, extraPids: number[] = []): Promise<{ value: T; ms: number; cpuUs: number }> {
    const c0 = this.read(extraPids);
    const t0 = performance.now();
    const value = await work();
    const ms = performance.now() - t0;
    return { value, ms, cpuUs: this.read(extraPids) - c0 };
  }
}

function readdirPids(): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number);
}

// ---- a burst of due jobs --------------------------------------------------------------------

export interface Lateness {
  p50: number;
  p99: number;
  max: number;
  done: number;
}

/** Bursts of each side taken in turns. */
export const BURST_ROUNDS = 3;

/**
 * `count` jobs due at the same millisecond, 4 s ahead, taken by a worker at concurrency 50 (no-op
 * processor) that is already waiting on the queue: their lateness (processedOn - due). `schedule`
 * adds them; the queue's other jobs must not fall due meanwhile.
 */
async function burst(env: Env, queueName: string, count: number, schedule: (due: number) => Promise<unknown>): Promise<Lateness> {
  const lates: number[] = [];
  const due = Date.now() + 4000;
  const worker = new Worker(queueName, async (job) => void lates.push((job.processedOn ?? Date.now()) - due), {
    connection: env.connections.create('bullmq', 'bench-scale-worker'),
    prefix: env.keys.bullPrefix,
    concurrency: 50,
  });
  await worker.waitUntilReady();
  await schedule(due);
  const started = Date.now();
  while (lates.length < count && Date.now() - started < 180_000) await sleep(20);
  await worker.close();
  lates.sort((a, b) => a - b);
  return { p50: percentile(lates, 50), p99: percentile(lates, 99), max: lates.at(-1) ?? NaN, done: lates.length };
}

type Side = { queueName: string; schedule: (round: number, due: number) => Promise<unknown> };

/**
 * BURST_ROUNDS bursts of `count` jobs on each side, in turns (ours, plain, ours, ...), so that
 * both meet the same machine: per side the median round by p99, and every round's p99.
 * `schedule(round, due)` adds a round's jobs (new ids each round).
 */
export async function burstsInTurns(env: Env, count: number, ours: Side, plain: Side): Promise<{ ours: Bursts; plain: Bursts }> {
  const rounds: [Lateness[], Lateness[]] = [[], []];
  for (let round = 0; round < BURST_ROUNDS; round++) {
    for (const [i, side] of [ours, plain].entries()) rounds[i]!.push(await burst(env, side.queueName, count, (due) => side.schedule(round, due)));
  }
  const summary = (r: Lateness[]): Bursts => ({ ...[...r].sort((a, b) => a.p99 - b.p99)[Math.floor(r.length / 2)]!, p99s: r.map((x) => x.p99) });
  return { ours: summary(rounds[0]), plain: summary(rounds[1]) };
}

export type Bursts = Lateness & { p99s: number[] };

/** A plain BullMQ queue beside the platform's (same prefix, same connection options). */
export function plainQueue(env: Env, name: string): Queue {
  return new Queue(name, { connection: env.connections.create('producer', `plain-${name}`), prefix: env.keys.bullPrefix });
}

export interface Timed {
  /** ms, sorted */
  times: number[];
  /** CPU µs of all the calls */
  cpuUs: number;
}

/**
 * `n` sequential calls of each side's op, in turns of `turn` (ours, plain, ours, ...), so that
 * both meet the same machine: per side the times and the CPU they used in all.
 */
export async function timeInTurns(
  meter: CpuMeter,
  n: number,
  ours: (i: number) => Promise<unknown>,
  plain: (i: number) => Promise<unknown>,
  turn = 100,
): Promise<{ ours: Timed; plain: Timed }> {
  const out = { ours: { times: [] as number[], cpuUs: 0 }, plain: { times: [] as number[], cpuUs: 0 } };
  for (let lo = 0; lo < n; lo += turn) {
    for (const [op, into] of [
      [ours, out.ours],
      [plain, out.plain],
    ] as const) {
      const { cpuUs } = await meter.measure(async () => {
        for (let i = lo; i < Math.min(n, lo + turn); i++) {
          const t0 = performance.now();
          await op(i);
          into.times.push(performance.now() - t0);
        }
      });
      into.cpuUs += cpuUs;
    }
  }
  out.ours.times.sort((a, b) => a - b);
  out.plain.times.sort((a, b) => a - b);
  return out;
}

export const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

// ---- the record -----------------------------------------------------------------------------

/**
 * One figure of one step, as a cost per item (higher is worse): the platform's and its plain
 * baseline's wall figure, and where measured their CPU time per item (bench process, Redis,
 * PostgreSQL and the server processes involved), which the load of a shared machine moves far less.
 */
export interface Figure {
  part: string;
  name: string;
  unit: string;
  step: number;
  ours: number;
  base?: number;
  cpu?: { ours: number; base?: number };
}

/** Growth of a figure from the first step to the last, raw and against its baseline. */
function growth(first: number, last: number, firstBase?: number, lastBase?: number): { raw: number; normalised?: number } {
  const raw = last / first;
  return firstBase !== undefined && lastBase !== undefined ? { raw, normalised: raw / (lastBase / firstBase) } : { raw };
}

const showGrowth = (g: { raw: number; normalised?: number }) =>
  `${g.raw.toFixed(2)}x${g.normalised !== undefined ? ` (against plain ${g.normalised.toFixed(2)}x)` : ''}`;

export class ScaleRecord {
  readonly figures: Figure[] = [];

  add(f: Figure): void {
    this.figures.push(f);
  }

  /**
   * Per figure: each step's value next to the baseline's, and the growth from the smallest step
   * to the largest, raw and against the baseline of the same step (which takes out much of what
   * the machine's load did between the steps). The CPU growth decides where it was measured;
   * otherwise the smaller of the two wall growths. Above 1.2x is flagged, and told apart from a
   * growth its plain baseline shares (the database's or BullMQ's own, not the platform's path).
   */
  summary(): string[] {
    const out: string[] = [];
    const byName = new Map<string, Figure[]>();
    for (const f of this.figures) byName.set(`${f.part}\u0000${f.name}`, [...(byName.get(`${f.part}\u0000${f.name}`) ?? []), f]);
    for (const figures of byName.values()) {
      const fs = [...figures].sort((a, b) => a.step - b.step);
      const first = fs[0]!;
      const last = fs.at(-1)!;
      const cells = fs.map((f) => `${stepLabel(f.step)} ${show(f.ours, f.unit)}${f.base !== undefined ? ` (plain ${show(f.base, f.unit)})` : ''}`);
      const wall = growth(first.ours, last.ours, first.base, last.base);
      let line = `${first.part.padEnd(9)} ${first.name.padEnd(46)} ${cells.join('  ')}`;
      let decisive = Math.min(wall.raw, wall.normalised ?? wall.raw);
      let againstBase = wall.normalised;
      if (fs.length > 1) line += `  → ${stepLabel(last.step)}/${stepLabel(first.step)} ${showGrowth(wall)}`;
      out.push(line);
      if (first.cpu && last.cpu) {
        const cpu = growth(first.cpu.ours, last.cpu.ours, first.cpu.base, last.cpu.base);
        decisive = cpu.raw;
        againstBase = cpu.normalised;
        const cpuCells = fs.map(
          (f) => `${stepLabel(f.step)} ${show(f.cpu!.ours, 'µs')}${f.cpu!.base !== undefined ? ` (plain ${show(f.cpu!.base, 'µs')})` : ''}`,
        );
        out.push(`${''.padEnd(9)} ${'  CPU per item'.padEnd(46)} ${cpuCells.join('  ')}${fs.length > 1 ? `  → ${showGrowth(cpu)}` : ''}`);
      }
      if (fs.length > 1 && decisive > 1.2)
        out[out.length - 1] += againstBase !== undefined && againstBase <= 1.2 ? '  OVER 1.2x, as much as its plain baseline' : '  OVER 1.2x';
    }
    return out;
  }
}

export function stepLabel(n: number): string {
  if (n >= 1_000_000) return `${n / 1_000_000}M`;
  if (n >= 1000) return `${n / 1000}k`;
  return String(n);
}

function show(v: number, unit: string): string {
  if (unit === 'B') return `${v.toFixed(0)} B`;
  if (unit === 'µs') return `${v.toFixed(1)} µs`;
  if (unit === 'ms') return `${v.toFixed(1)} ms`;
  return `${v.toFixed(2)} ${unit}`;
}
