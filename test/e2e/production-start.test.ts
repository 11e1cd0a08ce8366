/**
 * A production start (NODE_ENV=production) never runs a test fixture: with the crawler's defaults
 * (CRAWL_SITE=fixture, CRAWL_BASE_URL=embedded) `npm start` refuses at once, naming the setting,
 * before it starts any service; with a marketplace of its own it would start.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { removeDataDir, startProduct } from './support/product.js';

describe('npm start with NODE_ENV=production', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'wp-e2e-production-'));
  afterAll(() => removeDataDir(dataDir));

  it('refuses to serve the fixture marketplace, naming CRAWL_SITE, before starting anything', async () => {
    const failed = await startProduct({
      dataDir,
      port: 0,
      env: { NODE_ENV: 'production', JWT_SECRET: randomBytes(48).toString('base64'), ADMIN_PASSWORD: randomBytes(12).toString('hex') },
      startTimeoutMs: 60_000,
    }).then(
      () => 'started',
      (err: Error) => err.message,
    );
    expect(failed).toContain('did not start');
    expect(failed).toMatch(/CRAWL_SITE: the fixture marketplace .* is a test and demo service that a production start does not run/);
    // Nothing was started for it: no embedded services were provided.
    expect(existsSync(path.join(dataDir, 'services.json'))).toBe(false);
  }, 90_000);
});
