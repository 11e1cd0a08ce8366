import { defineConfig } from 'vitest/config';

/**
 * Projects:
 * - unit: pure modules, tests beside them in src/ (no Redis, no DB);
 * - integration: test/** on PGlite for in-process tests (multi-process tests ask for PostgreSQL);
 * - db-postgres: test/db/** again on PostgreSQL, so SQL-level code runs on both databases.
 * Each test file gets its own Redis and database (see test/support).
 */
export default defineConfig({
  test: {
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    teardownTimeout: 30_000,
    pool: 'forks',
    maxWorkers: 2,
    reporters: ['default'],
    projects: [
      { extends: true, test: { name: 'unit', include: ['src/**/*.test.ts', 'dashboards/**/*.test.ts'] } },
      { extends: true, test: { name: 'integration', include: ['test/**/*.test.ts'], env: { TEST_DB: 'pglite' } } },
      { extends: true, test: { name: 'db-postgres', include: ['test/db/**/*.test.ts'], env: { TEST_DB: 'postgres' } } },
    ],
  },
});
