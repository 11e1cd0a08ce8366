/**
 * Settings the processes of one platform must share, and how a process that does not share them
 * is found out. A fleet setting decides what a job does, so a job must not behave differently
 * depending on the process that takes it: OUTBOUND_ALLOW (a feed on an allowed intranet host
 * refreshes in one process and fails in the next), CRAWL_SITE and CRAWL_BASE_URL (which
 * marketplace an IP's crawl reads).
 *
 * Each process registers, with its details in the instance registry, a digest of each fleet
 * setting its roles use (sha256 of the normalised value, 12 hex digits: never the value, an allow
 * list names internal hosts). At start, a process whose digest differs from a live instance's logs
 * an error naming the setting and those instances; GET /api/cluster lists the disagreements, and
 * the leader exports the number of values in use (wp_cluster_settings_variants{setting}, alert
 * FleetSettingsDisagree).
 *
 * Why a check and not one source (the leader publishing OUTBOUND_ALLOW for every process): a
 * process's environment would no longer say what it does, whoever can write to Redis could widen
 * the outbound policy of every process, and a rolling change of the setting (processes restarted
 * one by one) would have no good answer for which value wins. Refusing to start would block that
 * rolling change; the error, the cluster view and the alert say what to fix until it is fixed.
 * Secrets (JWT_SECRET) are left out: no digest of a secret is written to Redis.
 */
import { createHash } from 'node:crypto';
import type { Config } from '../config/index.js';

export interface FleetSetting {
  env: string;
  /** The roles whose jobs depend on it: processes without one of them may differ. */
  roles: readonly string[];
  /** The value, normalised (equal settings written differently give the same string). */
  value(config: Config): string;
}

export const FLEET_SETTINGS: readonly FleetSetting[] = [
  {
    env: 'OUTBOUND_ALLOW',
    roles: ['feeds', 'crawler'],
    value: (c) => [...new Set(c.outbound.allow.map((e) => e.trim().toLowerCase()))].sort().join(','),
  },
  { env: 'CRAWL_SITE', roles: ['crawler'], value: (c) => c.crawl.site },
  { env: 'CRAWL_BASE_URL', roles: ['crawler'], value: (c) => c.crawl.baseUrl },
];

const digest = (value: string) => createHash('sha256').update(value).digest('hex').slice(0, 12);

/** The digests a process with these roles registers: env name → digest, for the fleet settings its roles use. */
export function fleetSettingDigests(config: Config, roles: readonly string[]): Record<string, string> {
  const used = FLEET_SETTINGS.filter((s) => s.roles.some((r) => roles.includes(r)));
  return Object.fromEntries(used.map((s) => [s.env, digest(s.value(config))]));
}

/** What an instance says about itself, as far as this module is concerned (older processes register no settings). */
export interface InstanceSettings {
  id: string;
  settings?: Record<string, string>;
}

export interface SettingDisagreement {
  setting: string;
  /** Each value in use (by its digest) with the instances using it, most used first. */
  variants: { digest: string; instances: string[] }[];
}

/** The fleet settings the instances do not agree on. */
export function settingDisagreements(instances: readonly InstanceSettings[]): SettingDisagreement[] {
  const out: SettingDisagreement[] = [];
  for (const { env } of FLEET_SETTINGS) {
    const byDigest = new Map<string, string[]>();
    for (const i of instances) {
      const d = i.settings?.[env];
      if (d !== undefined) byDigest.set(d, [...(byDigest.get(d) ?? []), i.id]);
    }
    if (byDigest.size < 2) continue;
    const variants = [...byDigest].map(([d, ids]) => ({ digest: d, instances: ids.sort() }));
    out.push({ setting: env, variants: variants.sort((a, b) => b.instances.length - a.instances.length || a.digest.localeCompare(b.digest)) });
  }
  return out;
}

/** How many values of each fleet setting are in use among the instances (0 when none uses it). */
export function settingVariants(instances: readonly InstanceSettings[]): Record<string, number> {
  return Object.fromEntries(
    FLEET_SETTINGS.map(({ env }) => [env, new Set(instances.flatMap((i) => (i.settings?.[env] === undefined ? [] : [i.settings[env]]))).size]),
  );
}

/** For a process joining: each fleet setting it uses whose value differs from other live instances', with those instances. */
export function differencesFrom(self: InstanceSettings, others: readonly InstanceSettings[]): { setting: string; instances: string[] }[] {
  return Object.entries(self.settings ?? {}).flatMap(([setting, mine]) => {
    const differing = others.filter((o) => o.id !== self.id && o.settings?.[setting] !== undefined && o.settings[setting] !== mine).map((o) => o.id);
    return differing.length ? [{ setting, instances: differing.sort() }] : [];
  });
}
