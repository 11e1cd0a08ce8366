/**
 * Offline migrations through Prisma's WASM schema engine, on PostgreSQL:
 * - the migration history applies and `_prisma_migrations` looks exactly as `prisma migrate
 *   deploy` writes it; a second run applies nothing;
 * - a migration with a `$$` function body applies, atomically: a failing one leaves nothing
 *   behind and is recorded as failed, and the next deploy refuses until it is resolved;
 * - `db:migration` creates a migration from the schema diff, and nothing when there is none.
 */
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { applyMigrationsChild, createMigrationChild, MIGRATIONS_DIR, SCHEMA_PATH } from '../support/migrate.js';

describe('migrations', () => {
  let db: TestDatabase;
  let client: pg.Client;
  const work = mkdtempSync(path.join(os.tmpdir(), 'wp-migrations-'));

  beforeAll(async () => {
    db = await createTestDatabase({ empty: true });
    client = new pg.Client({ connectionString: db.url });
  });
  afterAll(async () => {
    await client.end().catch(() => undefined);
    await db.drop();
    rmSync(work, { recursive: true, force: true });
  });

  it('applies the history and records it as prisma migrate deploy does', async () => {
    const names = readdirSync(MIGRATIONS_DIR, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name)
      .sort();
    const first = await applyMigrationsChild(db.url);
    expect(first).toEqual({ ok: true, result: names });
    expect(await applyMigrationsChild(db.url)).toEqual({ ok: true, result: [] });

    await client.connect();
    const cols = await client.query(
      "SELECT column_name, data_type, character_maximum_length FROM information_schema.columns WHERE table_name = '_prisma_migrations' ORDER BY ordinal_position",
    );
    expect(cols.rows.map((r) => [r.column_name, r.data_type, r.character_maximum_length])).toEqual([
      ['id', 'character varying', 36],
      ['checksum', 'character varying', 64],
      ['finished_at', 'timestamp with time zone', null],
      ['migration_name', 'character varying', 255],
      ['logs', 'text', null],
      ['rolled_back_at', 'timestamp with time zone', null],
      ['started_at', 'timestamp with time zone', null],
      ['applied_steps_count', 'integer', null],
    ]);
    const rows = await client.query('SELECT * FROM _prisma_migrations ORDER BY migration_name');
    expect(rows.rows.map((r) => r.migration_name)).toEqual(names);
    for (const r of rows.rows) {
      const sql = readFileSync(path.join(MIGRATIONS_DIR, r.migration_name, 'migration.sql'));
      expect(r.checksum).toBe(createHash('sha256').update(sql).digest('hex'));
      expect(r.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(r.finished_at).toBeInstanceOf(Date);
      expect(r.logs).toBeNull();
      expect(r.rolled_back_at).toBeNull();
      expect(r.applied_steps_count).toBe(1);
    }
    const tables = await client.query("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'");
    expect(tables.rows.map((r) => r.table_name)).toEqual(expect.arrayContaining(['users', 'feeds', 'articles', 'ips', 'titles', 'contents', 'chat_messages']));
  });

  it('applies a $$ function migration atomically', async () => {
    const dir = path.join(work, 'migrations');
    cpSync(MIGRATIONS_DIR, dir, { recursive: true });
    const addMigration = (name: string, sql: string) => {
      mkdirSync(path.join(dir, name));
      writeFileSync(path.join(dir, name, 'migration.sql'), sql);
    };
    addMigration(
      '29990101000000_touch_function',
      `CREATE FUNCTION wp_touch_test(x integer) RETURNS integer AS $$
BEGIN
  -- a semicolon inside the body; must not split the statement
  RETURN x + 1;
END;
$$ LANGUAGE plpgsql;
CREATE TABLE wp_touch_log (id serial PRIMARY KEY, note text);`,
    );
    expect(await applyMigrationsChild(db.url, dir)).toEqual({ ok: true, result: ['29990101000000_touch_function'] });
    expect((await client.query('SELECT wp_touch_test(41) AS v')).rows[0].v).toBe(42);

    addMigration(
      '29990102000000_half_broken',
      `CREATE FUNCTION wp_never(x integer) RETURNS integer AS $$ BEGIN RETURN x; END; $$ LANGUAGE plpgsql;
CREATE TABLE wp_never_table (id int);
SELECT * FROM table_that_does_not_exist;`,
    );
    const failed = await applyMigrationsChild(db.url, dir);
    expect(failed.ok).toBe(false);
    const leftovers = await client.query("SELECT count(*)::int AS n FROM pg_proc WHERE proname = 'wp_never'");
    expect(leftovers.rows[0].n).toBe(0);
    const table = await client.query("SELECT to_regclass('public.wp_never_table') AS t");
    expect(table.rows[0].t).toBeNull();
    const record = await client.query("SELECT finished_at, logs FROM _prisma_migrations WHERE migration_name = '29990102000000_half_broken'");
    expect(record.rows[0].finished_at).toBeNull();
    expect(record.rows[0].logs).toContain('table_that_does_not_exist');
    const refused = await applyMigrationsChild(db.url, dir);
    expect(refused.ok).toBe(false);
    expect(refused.error).toMatch(/failed migrations/i);
  });

  it('creates a migration from the schema diff, and none when nothing changed', async () => {
    const dir = path.join(work, 'create');
    cpSync(MIGRATIONS_DIR, dir, { recursive: true });
    const schema = path.join(work, 'schema.prisma');
    writeFileSync(schema, readFileSync(SCHEMA_PATH, 'utf8'));
    const shadowUrl = db.url;

    expect(await createMigrationChild('nothing', dir, schema, shadowUrl)).toEqual({ ok: true, result: { name: null, sql: expect.any(String) } });

    writeFileSync(
      schema,
      readFileSync(SCHEMA_PATH, 'utf8') + '\nmodel Widget {\n  id   Int    @id @default(autoincrement())\n  name String @unique\n\n  @@map("widgets")\n}\n',
    );
    const created = await createMigrationChild('add_widgets', dir, schema, shadowUrl);
    expect(created.ok).toBe(true);
    expect(created.result.name).toMatch(/^\d{14}_add_widgets$/);
    expect(created.result.sql).toContain('CREATE TABLE "widgets"');
    expect(created.result.sql).not.toContain('"feeds"');
    expect(readFileSync(path.join(dir, created.result.name, 'migration.sql'), 'utf8')).toBe(created.result.sql);
  }, 240_000); // each create replays the history into a shadow database
});
