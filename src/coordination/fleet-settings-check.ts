/**
 * A starting process compares its fleet settings (fleet-settings.ts) with the live instances' and
 * logs an error for each one that differs, naming the setting and the instances that use another
 * value. It starts all the same (see fleet-settings.ts for why); with Redis unreachable there is
 * nothing to compare with and nothing is logged (the heartbeat logs the outage).
 */
import type { Logger } from '../logging/logger.js';
import type { RedisClient } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import { differencesFrom, FLEET_SETTINGS, type InstanceSettings } from './fleet-settings.js';
import { listInstances } from './instance-registry.js';

export async function reportFleetSettingDifferences(deps: {
  redis: RedisClient;
  keys: Keys;
  self: InstanceSettings;
  logger: Logger;
}): Promise<{ setting: string; instances: string[] }[]> {
  let others;
  try {
    others = await listInstances(deps.redis, deps.keys);
  } catch (err) {
    deps.logger.debug({ err: (err as Error).message }, 'fleet settings not compared: the instance registry is unreachable');
    return [];
  }
  const differences = differencesFrom(deps.self, others);
  for (const { setting, instances } of differences) {
    const roles = FLEET_SETTINGS.find((s) => s.env === setting)?.roles.join(' and ');
    deps.logger.error(
      { setting, instances },
      `${setting} differs from the value of the running instance${instances.length > 1 ? 's' : ''} ${instances.join(', ')}: ` +
        `jobs of the ${roles} role${roles?.includes(' and ') ? 's' : ''} behave differently depending on the process that takes them; ` +
        `give every process the same ${setting} (GET /api/cluster lists the disagreements)`,
    );
  }
  return differences;
}
