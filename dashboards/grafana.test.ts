import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Metrics } from '../src/metrics/metrics.js';

/**
 * The Grafana dashboard only plots metrics the platform exports: the process-wide ones registered
 * here, and the domain ones listed in domain-metrics.json, which a running platform with every role
 * must export (checked in test/e2e/restart-and-attach.test.ts).
 */
describe('Grafana dashboard', () => {
  const dashboard = JSON.parse(readFileSync(new URL('./grafana/worker-platform.json', import.meta.url), 'utf8'));

  it('is a dashboard over a Prometheus data source variable', () => {
    expect(dashboard.uid).toBe('worker-platform');
    expect(dashboard.templating.list[0]).toMatchObject({ name: 'datasource', type: 'datasource', query: 'prometheus' });
    expect(dashboard.panels.length).toBeGreaterThan(5);
  });

  it('references only metric families the platform registers', async () => {
    const text = await new Metrics().registry.metrics();
    const exported = new Set(
      [...text.matchAll(/^# TYPE (\S+) (\S+)/gm)].flatMap(([, name, type]) =>
        type === 'histogram' ? [`${name}_bucket`, `${name}_sum`, `${name}_count`] : [name!],
      ),
    );
    const extra = new Set<string>(JSON.parse(readFileSync(new URL('./grafana/domain-metrics.json', import.meta.url), 'utf8')));
    for (const panel of dashboard.panels) {
      for (const target of panel.targets) {
        for (const [name] of target.expr.matchAll(/\bwp_[a-z0-9_]+/g)) {
          expect(exported.has(name) || extra.has(name.replace(/_(bucket|sum|count)$/, '')), `${panel.title}: ${name}`).toBe(true);
        }
      }
    }
  });
});
