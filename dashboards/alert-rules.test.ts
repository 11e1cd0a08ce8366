import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { Metrics } from '../src/metrics/metrics.js';
import { FLEET_METRICS } from '../src/runtime/fleet-metrics.js';
import { ROLE_NAMES } from '../src/runtime/roles.js';

const run = promisify(execFile);
const RULES = fileURLToPath(new URL('./prometheus/alert-rules.yml', import.meta.url));
const RULE_TESTS = fileURLToPath(new URL('./prometheus/alert-rules.test.yml', import.meta.url));
const CONFIG = fileURLToPath(new URL('./prometheus/prometheus.yml', import.meta.url));
/** Where docker-compose.yml's monitoring profile mounts the scrape token (the metrics_token secret). */
const TOKEN_FILE = '/run/secrets/metrics_token';
/** Metrics of the process that owns the embedded services (src/runtime/start-platform.ts). */
const EMBEDDED_METRICS = ['wp_embedded_service_up', 'wp_embedded_service_restarts_total'];

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
 * are checked against a running platform's /metrics in test/e2e/restart-and-attach.test.ts), the
 * fleet covered: a role without a process, a queue without a worker, an embedded service that
 * restarted, processes disagreeing on a setting. And the scrape configuration
 * (prometheus/prometheus.yml) that loads them: valid for Prometheus (promtool check config), one
 * job per role of docker-compose.yml.
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
    expect(rules.length).toBeGreaterThanOrEqual(22);
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
    const domain = new Set<string>([
      ...JSON.parse(readFileSync(new URL('./grafana/domain-metrics.json', import.meta.url), 'utf8')),
      ...FLEET_METRICS,
      ...EMBEDDED_METRICS,
    ]);
    for (const r of rules) {
      for (const [name] of r.expr.matchAll(/\bwp_[a-z0-9_]+/g)) {
        expect(exported.has(name) || domain.has(name.replace(/_(bucket|sum|count)$/, '')), `${r.alert}: ${name}`).toBe(true);
      }
    }
  });

  it('cover the fleet: a scrape that fails, a role without a process, a queue without a worker, embedded restarts, settings that disagree', () => {
    const byName = new Map(rules.map((r) => [r.alert, r.expr]));
    expect(byName.get('PlatformTargetDown')).toMatch(/\bup\{job=~"worker-platform-\.\+"\} == 0/);
    expect(byName.get('RoleWithoutProcess')).toMatch(/wp_cluster_instances/);
    expect(byName.get('ClusterRoleMissing')).toMatch(/absent\(wp_cluster_instances\)/);
    expect(byName.get('QueueWithoutWorker')).toMatch(/wp_queue_workers/);
    expect(byName.get('EmbeddedServiceRestarted')).toMatch(/wp_embedded_service_restarts_total/);
    expect(byName.get('FleetSettingsDisagree')).toMatch(/wp_cluster_settings_variants/);
    // Each is exercised by a promtool unit test.
    const tested = new Set([...readFileSync(RULE_TESTS, 'utf8').matchAll(/alertname: (\w+)/g)].map(([, n]) => n));
    for (const alert of [
      'PlatformTargetDown',
      'RoleWithoutProcess',
      'ClusterRoleMissing',
      'QueueWithoutWorker',
      'EmbeddedServiceRestarted',
      'EmbeddedServiceDown',
      'FleetSettingsDisagree',
    ]) {
      expect(tested, alert).toContain(alert);
    }
  });
});

interface ScrapeJob {
  job_name: string;
  authorization?: { type: string; credentials_file: string };
  dns_sd_configs?: { names: string[]; type: string; port: number }[];
}

describe('Prometheus scrape configuration', () => {
  const config = parse(readFileSync(CONFIG, 'utf8')) as { rule_files: string[]; scrape_configs: ScrapeJob[] };

  it('passes promtool check config, with the alert rules it loads', async () => {
    // The token file exists only inside the Prometheus container: check a copy pointing at a real one.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'wp-prometheus-'));
    try {
      writeFileSync(path.join(dir, 'token'), 'a-scrape-token-of-at-least-32-characters\n');
      writeFileSync(path.join(dir, 'prometheus.yml'), readFileSync(CONFIG, 'utf8').replaceAll(TOKEN_FILE, path.join(dir, 'token')));
      copyFileSync(RULES, path.join(dir, 'alert-rules.yml'));
      const { stdout } = await run('promtool', ['check', 'config', path.join(dir, 'prometheus.yml')]);
      expect(stdout).toMatch(/SUCCESS: .*prometheus\.yml is valid prometheus config file/);
      expect(stdout).toMatch(/SUCCESS: \d+ rules found/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('scrapes every replica of every role of docker-compose.yml with the scrape token, one job per role', () => {
    expect(config.rule_files).toEqual(['alert-rules.yml']);
    const compose = parse(readFileSync(new URL('../docker-compose.yml', import.meta.url), 'utf8'), { merge: true });
    for (const role of ROLE_NAMES) {
      const job = config.scrape_configs.find((j) => j.job_name === `worker-platform-${role}`);
      expect(job, role).toBeDefined();
      expect(job!.authorization).toEqual({ type: 'Bearer', credentials_file: TOKEN_FILE });
      // DNS service discovery: Docker answers a service's name with every replica's address.
      expect(job!.dns_sd_configs).toEqual([expect.objectContaining({ names: [role], type: 'A' })]);
      const service = compose.services[role];
      expect(service.expose, role).toContain(String(job!.dns_sd_configs![0]!.port));
      expect(service.environment.PORT).toBe(String(job!.dns_sd_configs![0]!.port));
    }
    // Compose hands the token to Prometheus as a secret, mounted where the configuration reads it.
    const prometheus = compose.services.prometheus;
    expect(prometheus.secrets).toContain(path.basename(TOKEN_FILE));
    expect(compose.secrets[path.basename(TOKEN_FILE)]).toEqual({ environment: 'METRICS_TOKEN' });
    expect(prometheus.volumes).toContain('./dashboards/prometheus:/etc/prometheus:ro');
    expect(prometheus.command).toContain('--config.file=/etc/prometheus/prometheus.yml');
  });
});
