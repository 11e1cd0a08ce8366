/**
 * The docs name everything a user can reach: every route of the REST API and the platform's own
 * (health, metrics, OpenAPI) is in docs/api.md's "Every route" table (and nothing there under /api/
 * is a route that does not exist), and every
 * queue is in docs/architecture.md's queue table with the role that works it. The settings are
 * checked by src/config/config.test.ts (docs/configuration.md is generated from the schema and
 * must equal what the schema renders).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { allRoutes, type ApiServices } from '../../src/http/routes/index.js';
import { platformRoutes } from '../../src/http/routes/platform-routes.js';
import { queueList } from '../../src/queues/definitions.js';

const doc = (name: string) => readFileSync(new URL(`../../docs/${name}`, import.meta.url), 'utf8');

/** The text of a `## heading` section. */
function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  expect(start, `section "${heading}"`).toBeGreaterThanOrEqual(0);
  const end = markdown.indexOf('\n## ', start + 1);
  return markdown.slice(start, end < 0 ? undefined : end);
}

/** `GET /a`, `GET/PATCH /b` in code spans → "GET /a", "GET /b", "PATCH /b". */
function documentedRoutes(text: string): Set<string> {
  const out = new Set<string>();
  for (const [, span] of text.matchAll(/`([A-Z]+(?:\/[A-Z]+)* \/[^`\s]*)`/g)) {
    const [methods, path] = span!.split(' ') as [string, string];
    for (const method of methods.split('/')) out.add(`${method} ${path}`);
  }
  return out;
}

/** The routes as the API serves them; the services are never called to list them. */
function servedRoutes(): string[] {
  // Anything a route builder reads of a service or setting: a number where it wants one.
  const never: any = new Proxy(() => never, { get: (_t, p) => (p === 'then' ? undefined : p === Symbol.toPrimitive ? () => 100 : never) });
  const services = { ...never, ipWeights: { weightMin: 0.1, weightMax: 10 }, messageSettings: { maxContentBytes: 1024 } };
  const s = new Proxy(services, { get: (t, p) => (p in t ? t[p] : never) }) as ApiServices;
  const own = platformRoutes({ metrics: never, monitor: never, metricsPublic: false, openapi: () => '{}' });
  return [...own, ...allRoutes(s)].map((r) => `${r.method.toUpperCase()} ${r.path}`);
}

describe('docs in step with the code', () => {
  it("docs/api.md's route table names every route of the API, and no /api/ route that does not exist", () => {
    const documented = documentedRoutes(section(doc('api.md'), 'Every route'));
    const served = servedRoutes();
    expect(served.length).toBeGreaterThan(30);
    expect(served.filter((r) => !documented.has(r))).toEqual([]);
    expect([...documented].filter((r) => r.includes(' /api/') && !served.includes(r))).toEqual([]);
  });

  it("docs/architecture.md's queue table names every queue with the role that works it", () => {
    const rows = section(doc('architecture.md'), 'Queues')
      .split('\n')
      .filter((line) => line.startsWith('| `'));
    for (const q of queueList) {
      const row = rows.find((line) => line.startsWith(`| \`${q.name}\` |`));
      expect(row, `queue ${q.name} in docs/architecture.md`).toBeDefined();
      expect(row!.split('|').at(-2), `the role of ${q.name}`).toContain(`\`${q.role}\``);
    }
    expect(rows).toHaveLength(queueList.length);
  });
});
