/**
 * docker-compose.yml cannot run here (no Docker engine), so this checks what it must contain:
 * Redis with AOF, a healthcheck and a volume; PostgreSQL with a healthcheck and a volume; a
 * migration step; the API and one service per worker role from the same image, each with the
 * settings it needs and waiting for healthy dependencies; every long-running service with its
 * port and a healthcheck of the Compose Specification's shape (a platform service's on the
 * /readyz of the PORT it is given); and a Dockerfile that builds them.
 *
 * The shape checked here follows the Compose Specification's JSON schema (compose-spec.json,
 * definitions/healthcheck: only these keys, durations as strings, `test` a string or a list
 * starting with NONE, CMD or CMD-SHELL); the file as a whole was validated against that schema
 * when it changed (docs/operations.md, scale-out).
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

  it("gives every long-running service its port and a healthcheck of the Compose Specification's shape", () => {
    const HEALTHCHECK_KEYS = new Set(['test', 'interval', 'timeout', 'retries', 'start_period', 'start_interval', 'disable']);
    const DURATION = /^(\d+(\.\d+)?(ns|us|ms|s|m|h))+$/;
    const services = Object.entries(compose.services as Record<string, Record<string, unknown>>);
    const longRunning = services.filter(([, svc]) => svc.restart !== 'no');
    expect(longRunning.map(([name]) => name).sort()).toEqual([...ROLE_NAMES, 'postgres', 'prometheus', 'redis'].sort());
    for (const [name, svc] of longRunning) {
      const ports = [...((svc.expose as unknown[]) ?? []), ...((svc.ports as unknown[]) ?? [])];
      expect(ports.length, `${name}: a port`).toBeGreaterThan(0);
      for (const p of (svc.expose as unknown[]) ?? []) expect(String(p), name).toMatch(/^\d+(-\d+)?(\/(tcp|udp))?$/);
      const hc = svc.healthcheck as Record<string, unknown> | undefined;
      expect(hc, `${name}: a healthcheck`).toBeDefined();
      for (const key of Object.keys(hc!)) expect(HEALTHCHECK_KEYS, `${name}: healthcheck.${key}`).toContain(key);
      expect(hc!.disable, name).toBeUndefined();
      const test = hc!.test as string[];
      expect(Array.isArray(test) && ['CMD', 'CMD-SHELL'].includes(test[0]!) && test.length > 1, `${name}: healthcheck.test`).toBe(true);
      for (const key of ['interval', 'timeout', 'start_period', 'start_interval']) {
        if (hc![key] !== undefined) expect(String(hc![key]), `${name}: healthcheck.${key}`).toMatch(DURATION);
        if (hc![key] !== undefined) expect(typeof hc![key], `${name}: healthcheck.${key} is a string`).toBe('string');
      }
      expect(Number.isInteger(hc!.retries) && (hc!.retries as number) > 0, `${name}: healthcheck.retries`).toBe(true);
      // A dependency waits for a condition the specification knows.
      for (const [dep, cond] of Object.entries((svc.depends_on as Record<string, { condition: string }>) ?? {})) {
        expect(compose.services[dep], `${name} depends on ${dep}`).toBeDefined();
        expect(['service_started', 'service_healthy', 'service_completed_successfully']).toContain(cond.condition);
      }
    }
    // The one-shot migration: no port to answer on, nothing to check once it exited.
    expect(compose.services.migrate.healthcheck).toBeUndefined();
    // Platform services: their readiness on the port they are given, on every address of the container.
    for (const role of ROLE_NAMES) {
      const svc = compose.services[role];
      expect(svc.environment.HOST, role).toBe('0.0.0.0');
      expect(svc.expose, role).toEqual([svc.environment.PORT]);
      expect(svc.healthcheck.test.join(' '), role).toContain(`http://127.0.0.1:${svc.environment.PORT}/readyz`);
    }
    // Top-level keys of the specification only (x- extensions allowed).
    for (const key of Object.keys(compose))
      expect(['name', 'services', 'volumes', 'secrets', 'networks', 'configs'].includes(key) || key.startsWith('x-'), key).toBe(true);
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
