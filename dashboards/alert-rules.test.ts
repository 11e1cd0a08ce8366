import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { Metrics } from '../src/metrics/metrics.js';

const run = promisify(execFile);
const RULES = fileURLToPath(new URL('./prometheus/alert-rules.yml', import.meta.url));
const RULE_TESTS = fileURLToPath(new URL('./prometheus/alert-rules.test.yml', import.meta.url));

interface Rule {
  alert: string;
  expr: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/**
 * The Prometheus alert rules: valid for Prometheus (promtool check rules), behaving as their
 * unit tests say (promtool test rules: input series → the alerts that fire), each with a
 * severity, a summary and what to do, and over metrics the platform registers (the domain ones
 * are checked against a running platform's /metrics in test/e2e/restart-and-attach.test.ts).
 */
describe('Prometheus alert rules', () => {
  const rules: Rule[] = parse(readFileSync(RULES, 'utf8')).groups.flatMap((g: { rules: Rule[] }) => g.rules);

  it('pass promtool check rules', async () => {
    const { stdout } = await run('promtool', ['check', 'rules', RULES]);
    expect(stdout).toContain(`SUCCESS: ${rules.length} rules found`);
  });

  it('fire as their promtool unit tests expect', async () => {
    const { stdout } = await run('promtool', ['test', 'rules', RULE_TESTS]);
    expect(stdout).toMatch(/SUCCESS/);
  });

  it('each say how severe they are, what happened and what to do', () => {
    expect(rules.length).toBeGreaterThanOrEqual(12);
    for (const r of rules) {
      expect(['critical', 'warning', 'info'], r.alert).toContain(r.labels?.severity);
      expect(r.annotations?.summary, r.alert).toBeTruthy();
      expect(r.annotations?.description, r.alert).toBeTruthy();
    }
  });

  it('use only metric families the platform registers', async () => {
    const text = await new Metrics().registry.metrics();
    const exported = new Set(
      [...text.matchAll(/^# TYPE (\S+) (\S+)/gm)].flatMap(([, name, type]) =>
        type === 'histogram' ? [`${name}_bucket`, `${name}_sum`, `${name}_count`, name!] : [name!],
      ),
    );
    const domain = new Set<string>(JSON.parse(readFileSync(new URL('./grafana/domain-metrics.json', import.meta.url), 'utf8')));
    for (const r of rules) {
      for (const [name] of r.expr.matchAll(/\bwp_[a-z0-9_]+/g)) {
        expect(exported.has(name) || domain.has(name.replace(/_(bucket|sum|count)$/, '')), `${r.alert}: ${name}`).toBe(true);
      }
    }
  });
});
