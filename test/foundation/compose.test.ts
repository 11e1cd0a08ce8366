/**
 * docker-compose.yml cannot run here (no Docker engine), so this checks what it must contain:
 * Redis with AOF, a healthcheck and a volume; PostgreSQL with a healthcheck and a volume; a
 * migration step; the API and one service per worker role from the same image, each with the
 * settings it needs and waiting for healthy dependencies; and a Dockerfile that builds them.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { listSettings } from '../../src/config/index.js';
import { ROLE_NAMES } from '../../src/runtime/roles.js';

const root = new URL('../../', import.meta.url);
const compose = parse(readFileSync(new URL('docker-compose.yml', root), 'utf8'), { merge: true });
const dockerfile = readFileSync(new URL('Dockerfile', root), 'utf8');

describe('docker-compose.yml', () => {
  it('runs Redis with AOF, a healthcheck and a volume', () => {
    const redis = compose.services.redis;
    expect(redis.command.join(' ')).toMatch(/--appendonly yes/);
    expect(redis.command.join(' ')).toMatch(/--appendfsync everysec/);
    expect(redis.healthcheck.test).toContain('ping');
    expect(redis.volumes[0]).toMatch(/^redis-data:\/data$/);
    expect(compose.volumes).toHaveProperty('redis-data');
  });

  it('runs PostgreSQL with a healthcheck and a volume', () => {
    const pg = compose.services.postgres;
    expect(pg.image).toMatch(/^postgres:/);
    expect(pg.healthcheck.test.join(' ')).toMatch(/pg_isready/);
    expect(pg.volumes[0]).toMatch(/^pg-data:\/var\/lib\/postgresql\/data$/);
  });

  it('runs every role from one image, configured for the shared Redis and PostgreSQL', () => {
    const platformServices = [...ROLE_NAMES, 'migrate'];
    const images = new Set<string>();
    for (const role of platformServices) {
      const svc = compose.services[role];
      expect(svc, `service ${role}`).toBeDefined();
      images.add(svc.image);
      expect(svc.build).toBe('.');
      expect(svc.environment.REDIS_URL).toBe('redis://redis:6379');
      expect(svc.environment.DATABASE_URL).toMatch(/^postgresql:\/\/.+@postgres:5432\//);
      expect(svc.environment.JWT_SECRET).toMatch(/:\?/); // required: compose refuses to start without it
      expect(svc.environment.ADMIN_PASSWORD).toMatch(/:\?/);
      expect(svc.env_file[0].path).toBe('.env');
      expect(svc.depends_on.postgres.condition).toBe('service_healthy');
      if (role !== 'migrate') {
        expect(svc.command).toEqual(['node', `dist/workers/${role}.js`]);
        expect(svc.depends_on.redis.condition).toBe('service_healthy');
        expect(svc.depends_on.migrate.condition).toBe('service_completed_successfully');
        expect(svc.environment.DATABASE_MIGRATE_ON_START).toBe('false');
      }
    }
    expect(images.size).toBe(1);
    expect(compose.services.api.ports[0]).toMatch(/:3000$/);
    expect(compose.services.api.environment.HOST).toBe('0.0.0.0');
    expect(compose.services.migrate.command).toEqual(['node', 'dist/src/db/cli-migrate.js']);
  });

  it('only sets variables the platform knows', () => {
    const known = new Set(listSettings().map((s) => s.env));
    for (const role of ROLE_NAMES) {
      for (const name of Object.keys(compose.services[role].environment)) expect(known.has(name), `${role}: ${name}`).toBe(true);
    }
  });

  it('has a Dockerfile that builds TypeScript and ships the system Chromium', () => {
    expect(dockerfile).toMatch(/npm run build/);
    expect(dockerfile).toMatch(/apt-get install[^\n]*chromium/);
    expect(dockerfile).toMatch(/PUPPETEER_EXECUTABLE_PATH=\/usr\/bin\/chromium/);
    for (const role of ROLE_NAMES) expect(readFileSync(new URL(`workers/${role}.ts`, root), 'utf8')).toMatch(/runProcess/);
  });
});
