/**
 * A shadow database for `db:migration` (the engine replays the migration history into one and
 * diffs it against the schema). PrismaPg's own factory drops the database before closing its
 * pool, so this closes the pool first and then drops.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { PrismaPg } from '@prisma/adapter-pg';
import type { SqlDriverAdapter } from '@prisma/driver-adapter-utils';
import { CharAwareClient } from './schema-engine.js';

function withCleanup(adapter: SqlDriverAdapter, cleanup: () => Promise<void>): SqlDriverAdapter {
  return new Proxy(adapter, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (prop === 'dispose') {
        return async () => {
          await value.call(target);
          await cleanup();
        };
      }
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** A temporary database on the PostgreSQL server of `url`, dropped on dispose. */
export function postgresShadow(url: string): () => Promise<SqlDriverAdapter> {
  return async () => {
    const name = `prisma_shadow_${randomUUID().replace(/-/g, '')}`;
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`CREATE DATABASE "${name}"`);
    await admin.end();
    const target = new URL(url);
    target.pathname = `/${name}`;
    const pool = new pg.Pool({ connectionString: target.toString(), max: 2, Client: CharAwareClient });
    const adapter = await new PrismaPg(pool).connect();
    return withCleanup(adapter, async () => {
      await pool.end();
      const dropper = new pg.Client({ connectionString: url });
      await dropper.connect();
      await dropper.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await dropper.end();
    });
  };
}
