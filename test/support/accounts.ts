/**
 * Users for security tests: an ordinary (non-admin) account made straight in the database, the
 * way an existing deployment has them (the insert leaves the role and flags at their defaults,
 * valid for every schema the users table has had), or through POST /api/users; then logged in.
 */
import bcrypt from 'bcryptjs';
import type { ApiClient } from './http-client.js';
import type { TestPlatform } from './platform.js';

/** A user with the default (non-admin) role, inserted with SQL; returns a client logged in as it. */
export async function createPlainUser(t: TestPlatform, username: string, password = `pw-${username}-0123`): Promise<ApiClient> {
  const hash = await bcrypt.hash(password, 4);
  await t.platform.ctx.db.pool.query('INSERT INTO users (username, password_hash, updated_at) VALUES ($1, $2, now())', [username, hash]);
  const client = t.api.withToken(undefined);
  await client.login(username, password);
  return client;
}

/** A user made by the admin through POST /api/users; returns a client logged in as it. */
export async function createUser(t: TestPlatform, username: string, role: 'admin' | 'user' = 'user', password = `pw-${username}-0123`): Promise<ApiClient> {
  const res = await t.api.post('/api/users', { username, password, role });
  if (res.status !== 201) throw new Error(`POST /api/users: ${res.status} ${JSON.stringify(res.body)}`);
  const client = t.api.withToken(undefined);
  await client.login(username, password);
  return client;
}

/** The sum of a counter's values in the platform's metrics registry (0 when it does not exist). */
export async function counterTotal(t: TestPlatform, name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = t.platform.ctx.metrics.registry.getSingleMetric(name);
  if (!metric) return 0;
  const { values } = await metric.get();
  return values.filter((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l)).reduce((sum, v) => sum + v.value, 0);
}
