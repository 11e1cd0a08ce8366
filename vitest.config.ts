import { defineConfig } from 'vitest/config';

/**
 * Projects:
 * - unit: pure modules, tests beside them in src/ (no Redis, no DB);
 * - integration: test/** (except e2e) on PostgreSQL and Redis, in-process and multi-process;
 * - e2e: test/e2e/**, the platform started as `npm start` starts it, used over HTTP.
 * Each test file gets its own Redis and database (see test/support); e2e files their own DATA_DIR.
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
      { extends: true, test: { name: 'integration', include: ['test/**/*.test.ts'], exclude: ['test/e2e/**'] } },
      { extends: true, test: { name: 'e2e', include: ['test/e2e/**/*.test.ts'] } },
    ],
  },
});
