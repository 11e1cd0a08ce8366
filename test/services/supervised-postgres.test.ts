/**
 * A killed postmaster whose backends outlive it: a backend busy in a long statement notices the
 * postmaster's death only once the statement ends, and until then it holds the old shared memory,
 * so a new postmaster refuses to start ("pre-existing shared memory block ... is still in use").
 * The supervisor's backoff waits that out and starts PostgreSQL again on the same port and data.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { startPostgresServer } from '../../src/services/postgres-server-process.js';
import { DEFAULT_RESTART_POLICY } from '../../src/services/restart-budget.js';
import { SupervisedService } from '../../src/services/supervised-service.js';
import { waitFor } from '../support/wait.js';

describe('a supervised PostgreSQL', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'wp-supervised-pg-'));
  chmodSync(dir, 0o755); // as root the server runs as the postgres user, which must reach it
  let service: SupervisedService | undefined;
  afterAll(async () => {
    await service?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('waits out the backends of a killed postmaster, then starts it again on the same port and data', async () => {
    // Durable (fsync, synchronous commit), as the embedded default runs: a committed row survives the crash.
    const options = { dir: path.join(dir, 'pg'), detached: true };
    const first = await startPostgresServer(options);
    const lines: { msg: string; err?: string }[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l));
        done();
      },
    });
    service = new SupervisedService(
      {
        service: 'postgres',
        label: 'PostgreSQL',
        logFile: path.join(first.dir, 'server.log'),
        start: () => startPostgresServer({ ...options, port: first.port, existingOnly: true }),
        policy: { ...DEFAULT_RESTART_POLICY, firstDelayMs: 100, maxDelayMs: 1000 },
        logger: pino({ level: 'info' }, sink),
      },
      first,
    );

    const setup = new pg.Client({ connectionString: first.adminUrl });
    await setup.connect();
    await setup.query('CREATE TABLE kept (v text)');
    await setup.query("INSERT INTO kept VALUES ('across the crash')");
    await setup.end();

    // A backend busy in a CPU-bound statement, ended by its statement timeout 4 s from now.
    const busy = new pg.Client({ connectionString: first.adminUrl });
    busy.on('error', () => undefined);
    await busy.connect();
    await busy.query("SET statement_timeout = '4s'");
    const running = busy.query('SELECT count(*) FROM generate_series(1, 10000000000)').catch((err: Error) => err);
    const watch = new pg.Client({ connectionString: first.adminUrl });
    await watch.connect();
    await waitFor(
      async () =>
        (await watch.query("SELECT 1 FROM pg_stat_activity WHERE state = 'active' AND query LIKE 'SELECT count%' AND pid <> pg_backend_pid()")).rowCount === 1,
      { message: 'the long statement running' },
    );
    await watch.end();

    process.kill(first.pid, 'SIGKILL');
    await waitFor(() => service!.status().restarts === 1, { timeoutMs: 60_000, message: 'restarted' });
    await running;

    // The first attempts met the old shared memory; the server's log says so.
    expect(lines.filter((l) => l.msg.includes('did not start again')).length).toBeGreaterThan(0);
    expect(readFileSync(path.join(first.dir, 'server.log'), 'utf8')).toMatch(/pre-existing shared memory block .* is still in use/);
    expect(service.status()).toEqual({ service: 'postgres', up: true, lost: false, restarts: 1 });

    const after = new pg.Client({ connectionString: first.adminUrl });
    await after.connect();
    try {
      expect((await after.query('SELECT v FROM kept')).rows).toEqual([{ v: 'across the crash' }]);
    } finally {
      await after.end();
    }
    busy.end().catch(() => undefined);
  }, 120_000);
});
